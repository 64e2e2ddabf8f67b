"""One campaign's life through the Python client generated from Adjutant's OpenAPI description
(openapi-python-client): a moderator opens a managed and a resolver campaign and issues players,
a player deploys, another posts a `resolve`, the moderator's bot reads its feed and acknowledges
every outcome, and anyone audits. Run by scripts/clients.sh:

    python flow.py BASE_URL        (the operator token in ADJUTANT_ADMIN_TOKEN)
"""

import json
import os
import sys
import uuid
from contextlib import ExitStack
from typing import TypeVar

from adjutant_client import AuthenticatedClient, Client
from adjutant_client.api.audit import audit_campaign, export_campaign
from adjutant_client.api.campaigns import create_campaign
from adjutant_client.api.feed import acknowledge, bot_feed
from adjutant_client.api.game import map_png
from adjutant_client.api.posts import create_post
from adjutant_client.api.tokens import create_moderator, create_moderator_bot, create_player
from adjutant_client.models import (
    CampaignAudit,
    CampaignView,
    IssuedToken,
    ManagedCampaign,
    ManagedCampaignScenarioType0,
    NewAcknowledgement,
    NewBot,
    NewModerator,
    NewPlayer,
    NewPlayerSide,
    NewPost,
    NewPostBody,
    PostBodyOpsTablesFire,
    PostBodyOpsTablesFireTargetTerrain,
    PostBodyShortAcwDeploy,
    PostBodyShortAcwDeployPlacementsItem,
    PostView,
    ResolverCampaign,
    ResolverCampaignRuleset,
    AcknowledgementView,
    BotFeed,
)
from adjutant_client.types import File

# The Union's deployment in the Short ACW Campaign: every unit within 1 hex of its cities.
UNION_DEPLOYMENT = [
    ("us-14th-inf", "0403"),
    ("us-13th-inf", "0403"),
    ("us-12th-inf", "0304"),
    ("us-27th-inf", "0304"),
    ("us-3rd-inf", "0206"),
    ("us-6th-inf", "0206"),
    ("us-29th-inf", "0206"),
    ("us-30th-inf", "0310"),
    ("us-3rd-cav", "0310"),
    ("us-4th-cav", "0310"),
    ("us-8th-arty", "0206"),
    ("us-10th-arty", "0206"),
    ("us-hq", "0206"),
]


T = TypeVar("T")


def answer(expected: type[T], response) -> T:
    """The parsed answer of the status the flow expects; anything else stops the flow, saying why."""
    if not isinstance(response.parsed, expected):
        sys.exit(f"expected {expected.__name__}, got {response.status_code}: {response.content.decode()}")
    return response.parsed


def main(base: str, operator_token: str, clients: ExitStack) -> None:
    def bearer(token: str) -> AuthenticatedClient:
        """A client that sends `token`, closed when the flow ends."""
        return clients.enter_context(AuthenticatedClient(base_url=base, token=token))

    operator = bearer(operator_token)
    moderator = bearer(
        answer(
            IssuedToken, create_moderator.sync_detailed(client=operator, body=NewModerator(name="Python moderator"))
        ).token
    )
    managed = answer(
        CampaignView,
        create_campaign.sync_detailed(
            client=moderator,
            body=ManagedCampaign(name="Python: the Short ACW", scenario=ManagedCampaignScenarioType0.SHORT_ACW),
        ),
    )
    table = answer(
        CampaignView,
        create_campaign.sync_detailed(
            client=moderator,
            body=ResolverCampaign(name="Python: Ops tables", ruleset=ResolverCampaignRuleset.OPS_TABLES),
        ),
    )

    def player(campaign: CampaignView, name: str) -> AuthenticatedClient:
        issued = create_player.sync_detailed(
            campaign.id, client=moderator, body=NewPlayer(name=name, side=NewPlayerSide.UNION)
        )
        return bearer(answer(IssuedToken, issued).token)

    general = player(managed, "Python general")
    gunner = player(table, "Python gunner")

    deploy = PostBodyShortAcwDeploy(
        placements=[PostBodyShortAcwDeployPlacementsItem(unit=unit, hex_=hex_) for unit, hex_ in UNION_DEPLOYMENT]
    )
    deployed = answer(
        PostView,
        create_post.sync_detailed(
            managed.id,
            client=general,
            body=NewPost(kind="deploy", body=NewPostBody.from_dict(deploy.to_dict())),
            idempotency_key=str(uuid.uuid4()),
        ),
    )
    assert deployed.kind == "deploy", deployed

    fire = PostBodyOpsTablesFire(
        firer_mode="normal",
        men=500,
        men_in_target_square=800,
        operation_points_remaining=8,
        range_=2,
        target_terrain=PostBodyOpsTablesFireTargetTerrain.WOODS,
        weapon="RFL",
    )
    resolved = answer(
        PostView,
        create_post.sync_detailed(
            table.id,
            client=gunner,
            body=NewPost(kind="resolve", body=NewPostBody.from_dict({"action": "fire", "inputs": fire.to_dict()})),
            idempotency_key=str(uuid.uuid4()),
        ),
    )
    assert resolved.outcomes, f"a resolve has an outcome: {resolved}"

    # The moderator's bot reads its feed (every campaign of the moderator) and acknowledges it all.
    bot = bearer(
        answer(IssuedToken, create_moderator_bot.sync_detailed(client=moderator, body=NewBot(name="Python bot"))).token
    )
    feed = answer(BotFeed, bot_feed.sync_detailed(client=bot))
    assert any(o.seq == resolved.seq and o.campaign_id == table.id for o in feed.outcomes), feed
    for outcome in feed.outcomes:
        ack = NewAcknowledgement(forum_post_id=f"python-{outcome.position}")
        answer(AcknowledgementView, acknowledge.sync_detailed(outcome.campaign_id, outcome.id, client=bot, body=ack))
    assert answer(BotFeed, bot_feed.sync_detailed(client=bot)).outcomes == [], "everything acknowledged"

    # Anyone audits, with no token at all.
    anyone = clients.enter_context(Client(base_url=base))
    for campaign in (managed, table):
        audit = answer(CampaignAudit, audit_campaign.sync_detailed(campaign.id, client=anyone))
        assert audit.ok and not audit.differences, audit
        assert audit.posts >= 1, audit

    # Downloads come as bytes: the export is NDJSON, the map a PNG.
    export = answer(File, export_campaign.sync_detailed(table.id, client=anyone))
    records = [json.loads(line) for line in export.payload.read().decode().splitlines() if line]
    assert records, "the export has records"
    picture = answer(File, map_png.sync_detailed(managed.id, client=anyone))
    assert picture.payload.read().startswith(b"\x89PNG\r\n\x1a\n"), "a PNG"
    print(
        f"python flow: ok (resolve seq {resolved.seq}, {len(feed.outcomes)} outcomes acknowledged, {len(records)} export records)"
    )


if __name__ == "__main__":
    with ExitStack() as clients:
        main(sys.argv[1], os.environ["ADJUTANT_ADMIN_TOKEN"], clients)
