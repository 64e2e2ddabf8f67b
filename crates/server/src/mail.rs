//! Mail to players: "it is your turn" when a wait of theirs begins, and reminders before its
//! deadline (`reminder_leads`), to the address the moderator recorded (`PUT …/contact`).
//!
//! The campaign clock's keeper queues them (`queue`), each under a key naming what it is about,
//! so a restart or a second server never queues one twice; the mailer sends what is due by the
//! server's clock through `smtp_url` and records each attempt, retrying a failure with a
//! growing pause. A mail whose wait is over by the time it would go (the turn ended, the
//! deadline moved) is skipped, with the reason in the mail log (`GET …/mails`).

use std::time::Duration;

use adjutant_rules::short_acw::deadline::{in_words, lead_in_words, TurnClock};
use adjutant_rules::short_acw::GameState;
use adjutant_store::{ClaimedMail, MailVerdict, NewMail, PrincipalKind};
use chrono::{DateTime, TimeDelta, Utc};
use lettre::message::header::{ContentTransferEncoding, ContentType};
use lettre::message::{Body, Mailbox};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::campaign::{parse_duration, parse_side, LoadedCampaign};
use crate::log::LogError;
use crate::AppState;

/// Mails sent per look.
const MAILS_PER_LOOK: i64 = 20;

/// What a queued mail is about, checked before it goes.
#[derive(Debug, Serialize, Deserialize)]
struct About {
    side: String,
    stage: String,
    since: DateTime<Utc>,
    /// A reminder: the deadline it reminds of (a turn mail has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    due: Option<DateTime<Utc>>,
}

/// The reminder lead times of the configuration, longest first.
pub fn reminder_leads(text: &str) -> Result<Vec<TimeDelta>, String> {
    let mut leads = text
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| parse_duration(t).ok_or_else(|| format!("reminder_leads: {t:?} is not a duration such as PT1H")))
        .collect::<Result<Vec<_>, _>>()?;
    leads.sort_by(|a, b| b.cmp(a));
    leads.dedup();
    Ok(leads)
}

/// The keys of the mails queued for each campaign's current waits: the clock's keeper looks
/// every few seconds, and writes each mail once per process (the database's key keeps it once
/// for good).
#[derive(Debug, Default)]
pub struct Queued(std::collections::HashMap<Uuid, std::collections::HashSet<String>>);

/// Queues the mails the campaign's waits call for: for each running wait, to the side's latest
/// player whose token works and who has an address, the turn mail and the reminders still ahead.
pub async fn queue(
    state: &AppState,
    queued: &mut Queued,
    campaign: &LoadedCampaign,
    game: &GameState,
) -> Result<usize, LogError> {
    if state.config.smtp_url.is_none() {
        return Ok(0);
    }
    let Some(clock) = game.clock.as_ref().filter(|c| c.paused.is_none() && game.result.is_none()) else {
        queued.0.remove(&campaign.campaign.id);
        return Ok(0);
    };
    let id = campaign.campaign.id;
    let players =
        state.store.campaign_principals(id, PrincipalKind::Player, crate::routes::tokens::MAX_PLAYERS_LISTED).await?;
    let contacts: std::collections::HashMap<Uuid, adjutant_store::Contact> =
        state.store.campaign_contacts(id).await?.into_iter().collect();
    let leads = reminder_leads(&state.config.reminder_leads).map_err(LogError::Broken)?;
    let zone = campaign.clock.zone;
    let name = &campaign.campaign.name;
    let link = match state.config.public_url.trim_end_matches('/') {
        "" => String::new(),
        base => format!(
            "\n\nYour page:\n{base}/play/{id}\nOpen it with the link your moderator gave you: it carries your token."
        ),
    };
    let at_deadline = match campaign.deadlines().map(|d| d.missed) {
        Some(adjutant_rules::short_acw::deadline::MissedTurn::Moderator) => "the moderator decides what happens",
        _ => "the server ends it as posted so far, with the campaign's documented defaults",
    };
    let mut made = 0;
    let mut keys = std::collections::HashSet::new();
    let before = queued.0.remove(&id).unwrap_or_default();
    for wait in clock.waits.iter() {
        let Some(due) = wait.due else { continue };
        let player = players
            .iter()
            .rev()
            .filter(|(p, revoked)| revoked.is_none() && p.side.as_deref().and_then(parse_side) == Some(wait.side))
            .find_map(|(p, _)| contacts.get(&p.id).and_then(|c| c.email.clone()).map(|email| (p, email)));
        let Some((player, email)) = player else { continue };
        let about = |due: Option<DateTime<Utc>>| {
            serde_json::to_string(&About {
                side: wait.side.key().into(),
                stage: wait.stage.clone(),
                since: wait.since,
                due,
            })
            .unwrap_or_default()
        };
        let mut mails = vec![NewMail {
            key: format!("turn {id} {} {} {}", wait.side.key(), wait.stage, wait.since.timestamp_millis()),
            campaign_id: id,
            principal_id: player.id,
            to: email.clone(),
            subject: format!("Your turn in {name}: {}", wait.stage),
            body: format!(
                "Hello {},\n\nIt is your turn in {name}: {}, for the {}, since {}.\n\nThe deadline is {}. If nothing is posted by then, {at_deadline}.{link}\n",
                player.name,
                wait.stage,
                wait.side,
                in_words(wait.since, zone),
                in_words(due, zone),
            ),
            about: about(None),
            due_at: wait.since,
        }];
        for lead in &leads {
            let at = due - *lead;
            if at <= wait.since {
                continue;
            }
            mails.push(NewMail {
                key: format!(
                    "reminder {id} {} {} {} {}",
                    wait.side.key(),
                    wait.stage,
                    due.timestamp_millis(),
                    lead.num_milliseconds()
                ),
                campaign_id: id,
                principal_id: player.id,
                to: email.clone(),
                subject: format!("Reminder: {} in {name} ends in {}", wait.stage, lead_in_words(*lead)),
                body: format!(
                    "Hello {},\n\nYour {} in {name} ends at {}, {} from now. If nothing is posted by then, {at_deadline}.{link}\n",
                    player.name,
                    wait.stage,
                    in_words(due, zone),
                    lead_in_words(*lead),
                ),
                about: about(Some(due)),
                due_at: at,
            });
        }
        for mail in mails {
            // Written once per process; the database keeps it once for good.
            if !before.contains(&mail.key) {
                made += usize::from(state.store.queue_mail(&mail).await?);
            }
            keys.insert(mail.key);
        }
    }
    queued.0.insert(id, keys);
    Ok(made)
}

/// Text with its lines broken between words at `width` characters at most (a longer word, such
/// as a link, stands on a line of its own, whole).
fn wrapped(text: &str, width: usize) -> String {
    let mut out = String::new();
    for (i, line) in text.replace("\r\n", "\n").split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let mut length = 0;
        for word in line.split(' ') {
            let count = word.chars().count();
            if length > 0 && length + 1 + count > width {
                out.push('\n');
                length = 0;
            } else if length > 0 {
                out.push(' ');
                length += 1;
            }
            out.push_str(word);
            length += count;
        }
    }
    out
}

/// Whether what a mail is about still holds in the clock: its wait goes on (and, for a
/// reminder, still runs to the same deadline).
fn still_so(about: &About, clock: Option<&TurnClock>) -> bool {
    clock.is_some_and(|c| {
        c.paused.is_none()
            && c.waits.iter().any(|w| {
                w.side.key() == about.side
                    && w.stage == about.stage
                    && w.since == about.since
                    && about.due.is_none_or(|due| w.due == Some(due))
            })
    })
}

/// Sends the queued mails as they come due.
pub struct Mailer {
    state: AppState,
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    poll: Duration,
}

impl Mailer {
    /// The mailer of a configuration with `smtp_url`, or none.
    pub fn new(state: AppState) -> Result<Option<Self>, String> {
        let Some(url) = state.config.smtp_url.clone() else { return Ok(None) };
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url.expose())
            .map_err(|e| format!("ADJUTANT_SMTP_URL: {e}"))?
            .timeout(Some(Duration::from_secs(30)))
            .build();
        let from: Mailbox =
            state.config.mail_from.parse().map_err(|e| format!("mail_from {:?}: {e}", state.config.mail_from))?;
        reminder_leads(&state.config.reminder_leads)?;
        let poll = Duration::from_millis(state.config.deadline_poll_ms.max(1));
        Ok(Some(Self { state, transport, from, poll }))
    }

    /// Sends until `stop` turns true.
    pub async fn run(self, mut stop: tokio::sync::watch::Receiver<bool>) {
        loop {
            if *stop.borrow() {
                return;
            }
            if let Err(e) = self.look().await {
                tracing::warn!(error = %e, "the mailer could not read its queue");
            }
            tokio::select! {
                () = tokio::time::sleep(self.poll) => {}
                _ = stop.changed() => {}
            }
        }
    }

    /// Sends the mails due now; returns how many went.
    pub async fn look(&self) -> Result<usize, LogError> {
        let now = self.state.clock.now();
        let claimed = self.state.store.claim_mails(now, now + TimeDelta::minutes(5), MAILS_PER_LOOK).await?;
        let mut sent = 0;
        for mail in claimed {
            let verdict = self.attempt(&mail).await;
            self.state.metrics.mail_attempted(match verdict {
                MailVerdict::Sent => "sent",
                MailVerdict::Skipped(_) => "skipped",
                MailVerdict::Failed { .. } => "failed",
            });
            if verdict == MailVerdict::Sent {
                sent += 1;
            }
            if let MailVerdict::Failed { error, .. } = &verdict {
                tracing::warn!(key = %mail.mail.key, attempt = mail.attempts, %error, "a mail was not sent");
            }
            self.state.store.finish_mail(&mail.mail.key, self.state.clock.now(), &verdict).await?;
        }
        Ok(sent)
    }

    async fn attempt(&self, claimed: &ClaimedMail) -> MailVerdict {
        let mail = &claimed.mail;
        let retry = |error: String| MailVerdict::Failed {
            error,
            // 1, 2, 4, … minutes, at most an hour.
            retry_at: self.state.clock.now() + TimeDelta::minutes(1 << claimed.attempts.clamp(0, 6)),
        };
        match self.still_due(mail).await {
            Ok(true) => {}
            Ok(false) => {
                return MailVerdict::Skipped("what it was about is over: the wait ended or its deadline moved".into())
            }
            Err(e) => return retry(e.to_string()),
        }
        let to: Mailbox = match mail.to.parse() {
            Ok(to) => to,
            Err(e) => return MailVerdict::Skipped(format!("the address {:?} cannot be written to: {e}", mail.to)),
        };
        // Plain text, in UTF-8; sent as it is (7 bit) when it can be, so a link is never broken
        // across lines.
        let text = wrapped(&mail.body, 72).replace('\n', "\r\n");
        let body = Body::new_with_encoding(text, ContentTransferEncoding::SevenBit).unwrap_or_else(Body::new);
        let message = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(mail.subject.clone())
            .header(ContentType::TEXT_PLAIN)
            .body(body);
        let message = match message {
            Ok(message) => message,
            Err(e) => return MailVerdict::Skipped(format!("the mail cannot be built: {e}")),
        };
        match self.transport.send(message).await {
            Ok(_) => MailVerdict::Sent,
            Err(e) => retry(e.to_string()),
        }
    }

    /// Whether the mail's wait still calls for it, in the campaign's state as the log stands.
    async fn still_due(&self, mail: &NewMail) -> Result<bool, LogError> {
        let Ok(about) = serde_json::from_str::<About>(&mail.about) else { return Ok(false) };
        let campaign = crate::routes::shared::campaign_to_post_to(&self.state, mail.campaign_id)
            .await
            .map_err(|e| LogError::Broken(format!("campaign {}: {e:?}", mail.campaign_id)))?;
        let snapshot = self.state.store.snapshot_at(mail.campaign_id, i64::MAX).await?;
        let game = campaign.state_from(snapshot.as_ref().map(|(_, text)| text.as_str()))?;
        Ok(still_so(&about, game.as_ref().and_then(|g| g.clock.as_ref())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reminder_leads_are_read_longest_first_and_refused_by_name() {
        assert_eq!(reminder_leads("PT1H, PT24H,PT1H").unwrap(), vec![TimeDelta::hours(24), TimeDelta::hours(1)]);
        assert!(reminder_leads("PT1H,soon").unwrap_err().contains("soon"));
        assert_eq!(lead_in_words(TimeDelta::hours(24)), "1 day");
        assert_eq!(lead_in_words(TimeDelta::minutes(90)), "90 minutes");
        assert_eq!(lead_in_words(TimeDelta::hours(1)), "1 hour");
        assert_eq!(lead_in_words(TimeDelta::hours(48)), "2 days");
    }

    #[test]
    fn mail_text_is_wrapped_between_words_and_a_long_word_stays_whole() {
        let link = format!("https://adjutant.example.org/play/{}", "x".repeat(40));
        let text = format!("It is your turn in the Valley campaign: turn 12, for the Union.\n\nYour page:\n{link}");
        let out = wrapped(&text, 30);
        assert!(out.lines().all(|l| l.chars().count() <= 30 || l == link), "{out}");
        assert_eq!(
            out.replace('\n', " ").split_whitespace().collect::<Vec<_>>(),
            text.split_whitespace().collect::<Vec<_>>()
        );
        assert!(out.contains(&format!("\n{link}")));
    }
}
