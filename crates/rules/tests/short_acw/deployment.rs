//! Ruling 11 (rules version 3): the side that deploys first is sealed until the other side has
//! deployed; then both deployments are revealed together.

use crate::common::*;
use adjutant_rules::short_acw::Phase;
use adjutant_rules::Side;

#[test]
fn the_first_deployment_stays_off_the_map_until_the_second_is_in() {
    let (first, second) = (script()[0].clone(), script()[1].clone());
    assert_eq!((first.side, second.side), (U, R));
    let mut g = Game::new();
    let start = g.state.clone();
    let out = g.post_at(first.side, &first.kind, first.body.clone(), first.stamp).unwrap().outcomes;
    // The outcome says that the Union deployed, not where.
    assert_eq!(out.len(), 1);
    let sealed = outcome(&out, "deployment_sealed");
    assert_eq!(sealed.data.to_json()["side"], "union");
    assert!(sealed.data.to_json().get("placements").is_none(), "{:?}", sealed.data);
    for p in first.body["placements"].as_array().unwrap() {
        let hex = p["hex"].as_str().unwrap();
        assert!(
            !sealed.headline.contains(hex) && !sealed.data.to_json().to_string().contains(hex),
            "{hex} is given away"
        );
    }
    // No Union unit is on the map, control is as it started, and only the Rebels are awaited.
    assert!(g.state.units.iter().filter(|u| u.side == Side::Union).all(|u| u.hex.is_none()));
    assert_eq!(g.state.control, start.control);
    assert_eq!(g.state.deployed, vec![Side::Union]);
    assert_eq!(g.state.awaiting.len(), 1);
    assert_eq!((g.state.awaiting[0].side, g.state.awaiting[0].kind.as_str()), (Side::Confederate, "deploy"));
    // The placements are kept in the state, and withheld from its public view.
    let kept = g.state.sealed_deployment.clone().expect("the seal is kept");
    assert_eq!(kept.side, Side::Union);
    assert_eq!(kept.placements.len(), first.body["placements"].as_array().unwrap().len());
    let public = g.state.as_public();
    assert!(public.sealed_deployment.is_none());
    assert!(!serde_json::to_string(&public).unwrap().contains("sealed_deployment"));
    // A second Union deployment is refused as before.
    g.refused(U, "deploy", first.body.clone(), "kind", "deployment.once", "already deployed");

    // The Rebels deploy: both deployments are revealed together, then turn 1 begins.
    let out = g.post_at(second.side, &second.kind, second.body.clone(), second.stamp).unwrap().outcomes;
    let kinds: Vec<&str> = out.iter().map(|o| o.kind()).collect();
    assert_eq!(&kinds[..2], ["deployed", "deployed"]);
    assert_eq!(out[0].data.to_json()["side"], "union");
    assert_eq!(out[0].data.to_json()["revealed"], true);
    assert_eq!(out[0].data.to_json()["placements"].as_array().unwrap().len(), kept.placements.len());
    assert_eq!(out[0].headline, format!("The Union's sealed deployment is revealed: {} units", kept.placements.len()));
    assert_eq!(out[1].data.to_json()["side"], "confederate");
    assert!(g.state.sealed_deployment.is_none());
    assert_eq!(g.state.phase, Phase::Reinforcement);
    for (unit, hex) in &kept.placements {
        assert_eq!(g.state.unit(unit).unwrap().hex, Some(*hex));
    }

    // The game goes on exactly as it did when deployments were open (version 2).
    let mut open = Game::new();
    open.settings.rules_version = 2;
    for p in [&first, &second] {
        open.post_at(p.side, &p.kind, p.body.clone(), p.stamp).unwrap();
    }
    assert_eq!(open.state, g.state);
}

#[test]
fn a_refused_second_deployment_reveals_nothing_and_keeps_the_seal() {
    let (first, second) = (script()[0].clone(), script()[1].clone());
    let mut g = Game::new();
    g.post_at(first.side, &first.kind, first.body.clone(), first.stamp).unwrap();
    let mut body = second.body.clone();
    body["placements"][0]["hex"] = serde_json::json!("0101");
    g.refused(R, "deploy", body, "body.placements[0].hex", "deployment.zone", "is not within 1 hex of");
    assert!(g.state.sealed_deployment.is_some());
    assert!(g.state.units.iter().all(|u| u.hex.is_none()));
}

#[test]
fn versions_1_and_2_deploy_in_the_open_as_they_did() {
    let first = script()[0].clone();
    for version in [1, 2] {
        let mut g = Game::new();
        g.settings.rules_version = version;
        let out = g.post_at(first.side, &first.kind, first.body.clone(), first.stamp).unwrap().outcomes;
        assert_eq!(out[0].kind(), "deployed");
        assert!(g.state.sealed_deployment.is_none());
        assert!(g.state.units.iter().filter(|u| u.side == Side::Union).all(|u| u.hex.is_some()));
        assert!(!serde_json::to_string(&g.state).unwrap().contains("sealed_deployment"));
    }
}
