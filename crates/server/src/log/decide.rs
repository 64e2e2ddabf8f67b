//! What a post decides: the rules' verdict on it, given the log before it. Pure: no store, no
//! clock, no HTTP. The live append, the per-post audit, the whole-campaign replay and the
//! offline verifier all decide a post here, with the context [`Needs`] says it reads.

use adjutant_rules::outcome::{Extended, Outcome, Paused, PlayerReplaced, Resumed};
use adjutant_rules::resolver;
use adjutant_rules::result_time::ChainSecret;
use adjutant_rules::short_acw::{self, GameState, Scenario};
use adjutant_rules::DiceStream;
use adjutant_store::{NewOutcome, Post, Tail};
use serde_json::{json, Value};

use super::bodies::{
    DeadlineBody, ExtendBody, PauseBody, ReminderBody, ReplacePlayerBody, ResolveBody, ResumeBody, RollbackBody,
    SealBody, SealRole, UmpireBody,
};
use super::error::{FieldPath, LogError, LogResult, PostRefusal};
use super::kinds::{OutcomeKind, PostKind, CLOCK_KINDS, RESULT_FIXING_ORDERS};
use super::view::{body_value, LogView};
use crate::campaign::{parse_side, Game, LoadedCampaign};
use crate::free_text::{forbidden, is_one_line, one_line_detail, LINE_MAX};

/// What a post decides besides being stored.
#[derive(Debug, Default)]
pub struct Effects {
    pub outcomes: Vec<NewOutcome>,
    pub snapshot: Option<String>,
    /// The dice a resolver's resolution rolled (the audit counts them).
    pub dice: i64,
}

/// Everything `decide` needs that is not in the tail.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The log before the post: void posts, standing seals.
    pub view: &'a LogView,
    /// For a rollback: the snapshot at or before the post rolled back to.
    pub rollback_snapshot: Option<&'a (i64, String)>,
    /// In a `sealed_delay` campaign, for a post that may fix a result: the chain secret it
    /// uses (the server's next one when the post is made; the one its outcome revealed when it
    /// is audited).
    pub chain_secret: Option<&'a ChainSecret>,
}

/// What a post's verdict reads from further back in the log than the tail. The one place that
/// says so: the live append reads what this names before its write, the audit and the replay
/// rebuild it from the stored log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Needs {
    /// The fold of the log before the post (void posts, seals).
    pub view: bool,
    /// The state snapshot at or before this post (a rollback's target).
    pub rollback_snapshot: Option<i64>,
    /// A sealed-delay chain secret.
    pub chain_secret: bool,
}

impl Needs {
    /// What a post of `kind` with `body` reads, in `campaign`.
    pub fn of(campaign: &LoadedCampaign, kind: &str, body: &Value) -> Self {
        let view = match PostKind::of(kind) {
            PostKind::Rollback | PostKind::Seal => true,
            PostKind::Resolve => body.get("sealed").is_some(),
            _ => false,
        };
        let rollback_snapshot = (PostKind::of(kind) == PostKind::Rollback)
            .then(|| body.get("to_seq").and_then(Value::as_i64))
            .flatten()
            .filter(|to_seq| *to_seq > 0);
        Self { view, rollback_snapshot, chain_secret: crate::sealed_delay::applies(campaign, kind) }
    }

    /// Whether the context must be read before the write transaction (and checked still
    /// current inside it).
    pub fn any(&self) -> bool {
        self.view || self.rollback_snapshot.is_some() || self.chain_secret
    }
}

/// An outcome, stored as the text of `{"headline": headline, "data": data}`: serde_json's maps
/// keep their keys sorted, so the fields are written `data` first. Written straight from `data`,
/// not through a copy of it in a new map: the whole-campaign audit writes one for every post.
/// Its id is a version 7 UUID: the post's stamp in milliseconds, then 74 random bits from the
/// thread's CSPRNG (no system call each). Ids that grow with time are written at the end of
/// the outcomes' id index, not on a random page of it, so a batch of posts dirties a few pages
/// of that index rather than one each.
fn outcome(post: &Post, kind: &str, headline: &str, data: &Value) -> NewOutcome {
    #[derive(serde::Serialize)]
    struct Stored<'a> {
        data: &'a Value,
        headline: &'a str,
    }
    NewOutcome {
        id: outcome_id(post),
        kind: kind.to_owned(),
        // Writing JSON values to a string cannot fail.
        data: serde_json::to_string(&Stored { data, headline }).unwrap_or_default(),
    }
}

/// A new outcome's id: a version 7 UUID, the post's stamp in milliseconds and then 74 random
/// bits (see [`outcome`]).
fn outcome_id(post: &Post) -> uuid::Uuid {
    uuid::Builder::from_unix_timestamp_millis(
        u64::try_from(post.stamp.timestamp_millis()).unwrap_or(0),
        &rand::random(),
    )
    .into_uuid()
}

/// An outcome the rules made, stored as its typed data writes itself: the same text as
/// [`outcome`] writes from its data as a `Value`, written without that value.
fn made(post: &Post, o: &Outcome) -> NewOutcome {
    NewOutcome { id: outcome_id(post), kind: o.kind().to_owned(), data: o.data.stored_text(&o.headline) }
}

/// Reads a body stored at `at` in the post (canonical JSON) into `T`, naming the field at fault.
fn body_of<T: serde::de::DeserializeOwned>(at: &FieldPath, text: &str) -> LogResult<T> {
    let value: Value = serde_json::from_str(text).map_err(|e| LogError::Broken(format!("a stored body: {e}")))?;
    read_at(at, value)
}

fn read_at<T: serde::de::DeserializeOwned>(at: &FieldPath, value: Value) -> LogResult<T> {
    if !value.is_object() {
        return Err(PostRefusal::invalid(at.clone(), "request.json_schema", "the body is a JSON object").into());
    }
    serde_path_to_error::deserialize(value).map_err(|err| {
        let path = err.path().to_string();
        PostRefusal::invalid(at.inside(&path), "request.json_schema", err.into_inner().to_string()).into()
    })
}

fn to_json<T: serde::Serialize>(value: &T) -> LogResult<String> {
    serde_json::to_string(value).map_err(|e| LogError::Broken(e.to_string()))
}

/// Applies a post to its campaign: the rules' verdict on it, given the tail of the log.
pub fn decide(campaign: &LoadedCampaign, tail: &Tail, post: &Post, context: &Context) -> LogResult<Effects> {
    match PostKind::of(&post.kind) {
        PostKind::Note => return Ok(Effects::default()),
        PostKind::ReplacePlayer => return replace_player(post),
        PostKind::Rollback => return rollback(campaign, post, context),
        PostKind::Seal => return seal(campaign, post, context),
        _ => {}
    }
    match &campaign.game {
        Game::Managed { scenario, settings } => {
            let state = campaign
                .state_from(tail.snapshot.as_ref().map(|(_, text)| text.as_str()))?
                .unwrap_or_else(|| campaign.opening_state(scenario));
            match PostKind::of(&post.kind) {
                PostKind::Umpire => return umpire(campaign, scenario, settings, &state, post),
                PostKind::Deadline | PostKind::Reminder | PostKind::Pause | PostKind::Resume | PostKind::Extend => {
                    return clock_post(scenario, settings, &state, post)
                }
                _ => {}
            }
            if let Some(paused) = state.clock.as_ref().and_then(|c| c.paused.as_ref()) {
                return Err(PostRefusal::conflict(
                    FieldPath::post("kind"),
                    "clock.paused",
                    format!(
                        "the moderator has paused the campaign (since {}): {}; no post is taken until it resumes",
                        paused.since.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                        paused.reason
                    ),
                )
                .into());
            }
            let body = body_value(post);
            let order = short_acw::Order {
                seq: post.seq as u64,
                side: post.side.as_deref().and_then(parse_side),
                kind: &post.kind,
                body: &body,
                stamp: post.stamp,
                settings,
                sealed: context.chain_secret.map(|secret| short_acw::SealedDraw { secret, post_hash: &post.hash }),
            };
            let applied =
                short_acw::apply(scenario, &state, &order).map_err(|r| PostRefusal::of_rules(&FieldPath::root(), r))?;
            Ok(Effects {
                outcomes: applied.outcomes.iter().map(|o| made(post, o)).collect(),
                snapshot: Some(to_json(&applied.state)?),
                dice: 0,
            })
        }
        Game::Resolver { ruleset, rules_version } => {
            if CLOCK_KINDS.contains(&PostKind::of(&post.kind)) {
                return Err(PostRefusal::invalid(
                    FieldPath::post("kind"),
                    "post.kind",
                    "deadlines, pause and extend are for managed campaigns, whose turns the server keeps",
                )
                .into());
            }
            if PostKind::of(&post.kind) != PostKind::Resolve {
                return Err(PostRefusal::invalid(
                    FieldPath::post("kind"),
                    "post.kind",
                    format!(
                        "a resolver campaign takes `resolve`, `note` and (moderators) `rollback` posts, not `{}`",
                        post.kind
                    ),
                )
                .into());
            }
            let mut body: ResolveBody = body_of(&FieldPath::post("body"), &post.body)?;
            if let Some(topic) = &body.sealed {
                fill_sealed_choices(&mut body.inputs, topic, context)?;
            }
            let dice = DiceStream::new(&post.campaign_id.to_string(), post.seq as u64, post.stamp);
            let resolution = resolver::resolve_under(*ruleset, *rules_version, &body.action, &body.inputs, dice)
                .map_err(|r| PostRefusal::of_rules(&FieldPath::root(), r))?;
            let dice = resolution.dice.len() as i64;
            Ok(Effects {
                outcomes: vec![made(post, &Outcome::new(resolution.headline.clone(), resolution))],
                snapshot: None,
                dice,
            })
        }
    }
}

/// A line of free text in a post's body: refused unless it is one line of 1 to `LINE_MAX`
/// characters.
fn check_line(field: FieldPath, rule: &str, what: &str, text: &str) -> LogResult<()> {
    if is_one_line(text, LINE_MAX) {
        Ok(())
    } else {
        Err(PostRefusal::invalid(field, rule, one_line_detail(what, LINE_MAX)).into())
    }
}

fn umpire(
    campaign: &LoadedCampaign,
    scenario: &Scenario,
    settings: &short_acw::Settings,
    state: &GameState,
    post: &Post,
) -> LogResult<Effects> {
    if post.side.is_some() {
        return Err(PostRefusal::forbidden("umpire.moderator_only", "only the campaign's moderator umpires").into());
    }
    let body: UmpireBody = body_of(&FieldPath::post("body"), &post.body)?;
    let Some(side) = parse_side(&body.side) else {
        return Err(PostRefusal::invalid(
            FieldPath::body("side"),
            "campaign.sides",
            "the side is `union` or `confederate` (`federal` and `yankee` are read as `union`, `rebel` as `confederate`)",
        )
        .into());
    };
    let kinds: Vec<&str> = short_acw::post_kinds().iter().map(|k| k.kind).collect();
    if !kinds.contains(&body.kind.as_str()) {
        return Err(PostRefusal::invalid(
            FieldPath::body("kind"),
            "umpire.kind",
            format!("a moderator posts the game's own orders for a side: {}", kinds.join(", ")),
        )
        .into());
    }
    check_line(FieldPath::body("reason"), "umpire.reason", "an umpire's post records its reason, which", &body.reason)?;
    if campaign.settings.result_time == adjutant_rules::result_time::ResultTime::SealedDelay
        && RESULT_FIXING_ORDERS.contains(&body.kind.as_str())
    {
        return Err(PostRefusal::invalid(
            FieldPath::body("kind"),
            "umpire.sealed_delay",
            "in a sealed-delay campaign only the side's player fixes a result number; at the deadline an attack not resolved is cancelled",
        )
        .into());
    }
    let may = short_acw::may_post(scenario, state, side);
    if !may.contains(&body.kind.as_str()) {
        let now = match may.as_slice() {
            [] => format!("the {} may post nothing now", body.side),
            kinds => format!("the {} may post {}", body.side, kinds.join(", ")),
        };
        return Err(PostRefusal::conflict(
            FieldPath::body("kind"),
            "umpire.not_awaited",
            format!("the game is not waiting for a {} from the {}: {now}", body.kind, body.side),
        )
        .into());
    }
    let order = short_acw::Order {
        seq: post.seq as u64,
        side: Some(side),
        kind: &body.kind,
        body: &body.body,
        stamp: post.stamp,
        settings,
        sealed: None,
    };
    // The answer is the order, inside the post's body: the rules' `body.x` is the post's `body.body.x`.
    let applied =
        short_acw::apply(scenario, state, &order).map_err(|r| PostRefusal::of_rules(&FieldPath::post("body"), r))?;
    let mut outcomes = vec![outcome(
        post,
        OutcomeKind::Umpire.as_str(),
        &format!("The moderator posts the {} for the {}: {}", body.kind, body.side, body.reason.trim()),
        &json!({"side": side, "kind": body.kind, "reason": body.reason.trim()}),
    )];
    outcomes.extend(applied.outcomes.iter().map(|o| made(post, o)));
    Ok(Effects { outcomes, snapshot: Some(to_json(&applied.state)?), dice: 0 })
}

/// The campaign clock's posts: the server's at a deadline, the moderator's pause, resume and
/// extend.
fn clock_post(
    scenario: &Scenario,
    settings: &short_acw::Settings,
    state: &GameState,
    post: &Post,
) -> LogResult<Effects> {
    use short_acw::deadline;
    let kind = PostKind::of(&post.kind);
    if post.side.is_some() {
        return Err(match kind {
            PostKind::Deadline | PostKind::Reminder => {
                PostRefusal::forbidden("deadline.server_only", "deadline and reminder posts are the server's own")
            }
            _ => PostRefusal::forbidden(
                "clock.moderator_only",
                "only the campaign's moderator pauses, resumes and extends",
            ),
        }
        .into());
    }
    let rules = |r| LogError::from(PostRefusal::of_rules(&FieldPath::root(), r));
    let zone = settings.clock.zone;
    let (state, record) = match kind {
        PostKind::Deadline => {
            let body: DeadlineBody = body_of(&FieldPath::post("body"), &post.body)?;
            let side = parse_side(&body.side).ok_or_else(|| {
                PostRefusal::invalid(FieldPath::body("side"), "campaign.sides", "the side is `union` or `confederate`")
            })?;
            let applied = deadline::missed(scenario, state, settings, post.stamp, side, &body.stage).map_err(rules)?;
            let outcomes = applied.outcomes.iter().map(|o| made(post, o)).collect();
            return Ok(Effects { outcomes, snapshot: Some(to_json(&applied.state)?), dice: 0 });
        }
        PostKind::Reminder => {
            let body: ReminderBody = body_of(&FieldPath::post("body"), &post.body)?;
            let side = parse_side(&body.side).ok_or_else(|| {
                PostRefusal::invalid(FieldPath::body("side"), "campaign.sides", "the side is `union` or `confederate`")
            })?;
            let lead = chrono::TimeDelta::milliseconds(body.lead_ms);
            let applied = deadline::remind(state, settings, post.stamp, side, &body.stage, lead).map_err(rules)?;
            let outcomes = applied.outcomes.iter().map(|o| made(post, o)).collect();
            return Ok(Effects { outcomes, snapshot: Some(to_json(&applied.state)?), dice: 0 });
        }
        PostKind::Pause => {
            let body: PauseBody = body_of(&FieldPath::post("body"), &post.body)?;
            check_line(FieldPath::body("reason"), "pause.reason", "a pause records its reason, which", &body.reason)?;
            let reason = body.reason.trim();
            let next = deadline::pause(state, post.stamp, reason).map_err(rules)?;
            let headline = format!(
                "The moderator paused the campaign: {reason}. No post is taken and no deadline runs until it resumes"
            );
            (next, Outcome::new(headline, Paused { reason: reason.to_owned() }))
        }
        PostKind::Resume => {
            let body: ResumeBody = body_of(&FieldPath::post("body"), &post.body)?;
            if let Some(reason) = &body.reason {
                check_line(FieldPath::body("reason"), "resume.reason", "a reason, when given,", reason)?;
            }
            let next = deadline::resume(state, settings, post.stamp).map_err(rules)?;
            let mut headline = "The moderator resumed the campaign".to_owned();
            if let Some(wait) = next.clock.as_ref().and_then(|c| c.next_due()) {
                headline.push_str(&format!(
                    "; the {}'s {} now ends by {}",
                    wait.side,
                    wait.stage,
                    wait.due.map(|d| deadline::in_words(d, zone)).unwrap_or_default()
                ));
            }
            let reason = body.reason.as_deref().map(|r| r.trim().to_owned());
            (next, Outcome::new(headline, Resumed { reason }))
        }
        _ => {
            let body: ExtendBody = body_of(&FieldPath::post("body"), &post.body)?;
            check_line(
                FieldPath::body("reason"),
                "extend.reason",
                "an extension records its reason, which",
                &body.reason,
            )?;
            let by = crate::campaign::parse_duration(&body.by)
                .filter(|d| (crate::campaign::DEADLINE_RANGE.0..=crate::campaign::DEADLINE_RANGE.1).contains(d))
                .ok_or_else(|| {
                    PostRefusal::invalid(
                        FieldPath::body("by"),
                        "extend.by",
                        "a duration from PT1M to P30D in days, hours, minutes and seconds (e.g. PT24H)",
                    )
                })?;
            let side = match &body.side {
                Some(text) => Some(parse_side(text).ok_or_else(|| {
                    PostRefusal::invalid(
                        FieldPath::body("side"),
                        "campaign.sides",
                        "the side is `union` or `confederate`",
                    )
                })?),
                None => None,
            };
            let (next, moved) = deadline::extend(state, side, by, post.stamp).map_err(rules)?;
            let reason = body.reason.trim();
            let headline = format!("The moderator gives {} more before the deadline: {reason}", body.by);
            let data = Extended { by: body.by.clone(), side, reason: reason.to_owned(), waits: moved };
            (next, Outcome::new(headline, data))
        }
    };
    Ok(Effects { outcomes: vec![made(post, &record)], snapshot: Some(to_json(&state)?), dice: 0 })
}

/// A side's player replaced: recorded in the log, so the log says who played each post.
fn replace_player(post: &Post) -> LogResult<Effects> {
    if post.side.is_some() {
        return Err(PostRefusal::forbidden(
            "replace.moderator_only",
            "only the campaign's moderator replaces a player",
        )
        .into());
    }
    let body: ReplacePlayerBody = body_of(&FieldPath::post("body"), &post.body)?;
    let side = parse_side(&body.side).ok_or_else(|| {
        PostRefusal::invalid(FieldPath::body("side"), "campaign.sides", "the side is `union` or `confederate`")
    })?;
    let headline = format!("The {side} is now played by {}, who replaces {}", body.name, body.replaced_name);
    let data = PlayerReplaced {
        side,
        name: body.name,
        replaced_name: body.replaced_name,
        player: body.by.to_string(),
        replaced: body.replaced.to_string(),
    };
    Ok(Effects { outcomes: vec![made(post, &Outcome::new(headline, data))], snapshot: None, dice: 0 })
}

fn seal(campaign: &LoadedCampaign, post: &Post, context: &Context) -> LogResult<Effects> {
    if matches!(campaign.game, Game::Managed { .. }) {
        return Err(PostRefusal::invalid(
            FieldPath::post("kind"),
            "post.kind",
            "sealed choices are for resolver campaigns; the Short ACW Campaign asks its questions itself",
        )
        .into());
    }
    if post.side.is_none() {
        return Err(PostRefusal::forbidden("seal.players_only", "a sealed choice is a player's").into());
    }
    let body: SealBody = body_of(&FieldPath::post("body"), &post.body)?;
    let topic = body.topic.as_str();
    if topic.is_empty() || topic.len() > 80 || topic.trim() != topic || topic.chars().any(forbidden) {
        return Err(PostRefusal::invalid(
            FieldPath::body("topic"),
            "seal.topic",
            "a topic has 1 to 80 characters, with no space at either end",
        )
        .into());
    }
    if body.choice.trim().is_empty() || body.choice.len() > 40 || body.choice.chars().any(forbidden) {
        return Err(PostRefusal::invalid(
            FieldPath::body("choice"),
            "seal.choice",
            "a choice has 1 to 40 characters on one line",
        )
        .into());
    }
    let on_topic = context.view.seals().on_topic(topic);
    if on_topic.iter().any(|s| s.body.role == body.role) {
        return Err(PostRefusal::conflict(
            FieldPath::body("role"),
            "seal.once",
            format!("the {} choice on {topic:?} is already sealed", body.role.name()),
        )
        .into());
    }
    // The two choices of a topic are the two sides': one side cannot seal both, nor the
    // other side's role once that side has sealed its own.
    if on_topic.iter().any(|s| s.side == post.side) {
        return Err(PostRefusal::forbidden(
            "seal.other_side",
            format!("your side has already sealed a choice on {topic:?}; the other choice is the other side's"),
        )
        .into());
    }
    let side = post.side.clone().unwrap_or_default();
    let mut outcomes = vec![outcome(
        post,
        OutcomeKind::Sealed.as_str(),
        &format!("The {side} player has sealed the {} choice on {topic}.", body.role.name()),
        &json!({"topic": topic, "role": body.role, "side": side}),
    )];
    if let Some(other) = on_topic.iter().find(|s| s.body.role == body.role.other() && s.side != post.side) {
        let (attacker, defender) = match body.role {
            SealRole::Attacker => (&body, &other.body),
            SealRole::Defender => (&other.body, &body),
        };
        outcomes.push(outcome(
            post,
            OutcomeKind::Revealed.as_str(),
            &format!(
                "Both choices on {topic} are in: the attacker {}, the defender {}.",
                attacker.choice, defender.choice
            ),
            &json!({"topic": topic, "attacker_choice": attacker.choice, "defender_choice": defender.choice,
                    "sealed_posts": [other.seq, post.seq]}),
        ));
    }
    Ok(Effects { outcomes, snapshot: None, dice: 0 })
}

fn fill_sealed_choices(inputs: &mut Value, topic: &str, context: &Context) -> LogResult<()> {
    let Some((attacker, defender)) =
        context.view.seals().pair(topic).map(|(a, d)| (a.body.choice.clone(), d.body.choice.clone()))
    else {
        return Err(PostRefusal::invalid(
            FieldPath::body("sealed"),
            "seal.both_in",
            format!("both the attacker's and the defender's choices on {topic:?} must be sealed first"),
        )
        .into());
    };
    let Some(map) = inputs.as_object_mut() else {
        return Err(
            PostRefusal::invalid(FieldPath::body("inputs"), "resolver.inputs", "the inputs are a JSON object").into()
        );
    };
    for key in ["attacker_choice", "defender_choice"] {
        if map.contains_key(key) {
            return Err(PostRefusal::invalid(
                FieldPath::body(&format!("inputs.{key}")),
                "seal.from_seals",
                "with `sealed`, the choices come from the sealed posts, not the inputs",
            )
            .into());
        }
    }
    map.insert("attacker_choice".into(), Value::String(attacker));
    map.insert("defender_choice".into(), Value::String(defender));
    Ok(())
}

fn rollback(campaign: &LoadedCampaign, post: &Post, context: &Context) -> LogResult<Effects> {
    if post.side.is_some() {
        return Err(PostRefusal::forbidden(
            "rollback.moderator_only",
            "only the campaign's moderator can roll it back",
        )
        .into());
    }
    let body: RollbackBody = body_of(&FieldPath::post("body"), &post.body)?;
    check_line(FieldPath::body("reason"), "rollback.reason", "a rollback records its reason, which", &body.reason)?;
    if body.to_seq < 0 || body.to_seq >= post.seq - 1 {
        return Err(PostRefusal::invalid(
            FieldPath::body("to_seq"),
            "rollback.to_seq",
            format!("roll back to an earlier post: 0 to {} (0 voids every post)", post.seq - 2),
        )
        .into());
    }
    let void = context.view.void();
    if void.contains(&body.to_seq) {
        return Err(PostRefusal::invalid(
            FieldPath::body("to_seq"),
            "rollback.void_target",
            format!("post {} is already void; roll back to a post that stands", body.to_seq),
        )
        .into());
    }
    let voided: Vec<i64> = void.gaps(body.to_seq + 1..post.seq);
    let snapshot = match campaign.scenario() {
        Some(_) => {
            let mut state = match context.rollback_snapshot {
                Some((_, text)) => campaign.state_from(Some(text))?,
                None => campaign.state_from(None)?,
            };
            // The waits of the state rolled back to begin again now, each with its whole time:
            // deadlines that had passed by then are not due at once.
            if let (Some(state), Some(deadlines)) = (state.as_mut(), campaign.deadlines()) {
                let paused = state.clock.as_ref().and_then(|c| c.paused.clone());
                let fresh = short_acw::deadline::TurnClock { waits: vec![], paused };
                state.clock =
                    Some(short_acw::deadline::follow(Some(&fresh), state, &deadlines, campaign.clock.zone, post.stamp));
            }
            Some(to_json(&state)?)
        }
        None => None,
    };
    let headline = format!(
        "The moderator rolled the campaign back to post {}: {} void. Reason: {}",
        body.to_seq,
        match voided.len() {
            1 => "1 post".to_owned(),
            n => format!("{n} posts"),
        },
        body.reason.trim()
    );
    let data = json!({"to_seq": body.to_seq, "reason": body.reason.trim(), "voided": voided});
    Ok(Effects { outcomes: vec![outcome(post, OutcomeKind::Rollback.as_str(), &headline, &data)], snapshot, dice: 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outcome_is_stored_as_the_text_of_its_headline_and_data_map() {
        let data = json!({"zeta": [1, {"b": "\"quoted\"", "a": null}], "alpha": "é ✓ \n", "mid": 2.5});
        let headline = "A \"headline\" with <markup> & a line\nbreak";
        let post = Post {
            campaign_id: uuid::Uuid::from_u128(7),
            seq: 3,
            stamp: chrono::DateTime::from_timestamp_millis(1_795_598_661_762).expect("a time"),
            author_id: uuid::Uuid::from_u128(2),
            side: None,
            kind: "resolve".into(),
            body: "{}".into(),
            prev_hash: String::new(),
            hash: String::new(),
            receipt: None,
        };
        let made = outcome(&post, "resolution", headline, &data);
        assert_eq!(made.data, json!({"headline": headline, "data": data}).to_string());
        assert!(made.data.starts_with("{\"data\":{\"alpha\""), "{}", made.data);
        // A version 7 id carrying the post's stamp, random after it.
        assert_eq!(made.id.get_version_num(), 7);
        assert_eq!(made.id.get_timestamp().map(|t| t.to_unix()), Some((1_795_598_661, 762_000_000)));
        let again = outcome(&post, "resolution", headline, &data);
        assert_ne!(again.id, made.id);
        assert_eq!(&again.id.as_bytes()[..6], &made.id.as_bytes()[..6]);
    }
}
