// One campaign's life through the TypeScript client generated from Adjutant's OpenAPI description
// (openapi-typescript's types, openapi-fetch's client): a moderator opens a managed and a resolver
// campaign and issues players, a player deploys, another posts a `resolve`, the moderator's bot
// reads its feed and acknowledges every outcome, and anyone audits. Run by scripts/clients.sh:
//
//     node flow.js BASE_URL        (the operator token in ADJUTANT_ADMIN_TOKEN)

import { randomUUID } from "node:crypto";
import createClient from "openapi-fetch";
import type { components, paths } from "./schema.js";

type Schemas = components["schemas"];

const base = process.argv[2];
const operatorToken = process.env.ADJUTANT_ADMIN_TOKEN;
if (!base || !operatorToken) {
  throw new Error("usage: node flow.js BASE_URL, with the operator token in ADJUTANT_ADMIN_TOKEN");
}

/** A client that sends `token` as its bearer token (none: a reader without one). */
function as(token?: string) {
  return createClient<paths>({ baseUrl: base, headers: token ? { Authorization: `Bearer ${token}` } : {} });
}

/** The answer's body when it is a success; a problem stops the flow, saying why. */
function ok<T>(answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.data === undefined) {
    throw new Error(`${answer.response.status} ${answer.response.url}: ${JSON.stringify(answer.error)}`);
  }
  return answer.data;
}

function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(what);
}

// The Union's deployment in the Short ACW Campaign: every unit within 1 hex of its cities.
const unionDeployment: Schemas["PostBody.short-acw.deploy"] = {
  placements: [
    { unit: "us-14th-inf", hex: "0403" }, { unit: "us-13th-inf", hex: "0403" },
    { unit: "us-12th-inf", hex: "0304" }, { unit: "us-27th-inf", hex: "0304" },
    { unit: "us-3rd-inf", hex: "0206" }, { unit: "us-6th-inf", hex: "0206" },
    { unit: "us-29th-inf", hex: "0206" }, { unit: "us-30th-inf", hex: "0310" },
    { unit: "us-3rd-cav", hex: "0310" }, { unit: "us-4th-cav", hex: "0310" },
    { unit: "us-8th-arty", hex: "0206" }, { unit: "us-10th-arty", hex: "0206" },
    { unit: "us-hq", hex: "0206" },
  ],
};

const operator = as(operatorToken);
const moderator = as(ok(await operator.POST("/v1/moderators", { body: { name: "TypeScript moderator" } })).token);
const managed = ok(
  await moderator.POST("/v1/campaigns", { body: { name: "TypeScript: the Short ACW", scenario: "short-acw" } }),
);
const table = ok(await moderator.POST("/v1/campaigns", { body: { name: "TypeScript: Ops tables", ruleset: "ops-tables" } }));

async function player(campaign: Schemas["CampaignView"], name: string) {
  const issued = await moderator.POST("/v1/campaigns/{id}/players", {
    params: { path: { id: campaign.id } },
    body: { name, side: "union" },
  });
  return as(ok(issued).token);
}
const general = await player(managed, "TypeScript general");
const gunner = await player(table, "TypeScript gunner");

const deployed = ok(
  await general.POST("/v1/campaigns/{id}/posts", {
    params: { path: { id: managed.id }, header: { "Idempotency-Key": randomUUID() } },
    body: { kind: "deploy", body: unionDeployment },
  }),
);
check(deployed.kind === "deploy", `a deployment: ${JSON.stringify(deployed)}`);

// openapi-typescript types a field that has a default as always present, so those are sent too.
const fire: Schemas["PostBody.ops-tables.fire"] = {
  firer_mode: "normal",
  flank: false,
  target_fortification_level: 0,
  target_higher_elevation: false,
  men: 500,
  men_in_target_square: 800,
  operation_points_remaining: 8,
  range: 2,
  target_terrain: "woods",
  weapon: "RFL",
};
const resolved = ok(
  await gunner.POST("/v1/campaigns/{id}/posts", {
    params: { path: { id: table.id }, header: { "Idempotency-Key": randomUUID() } },
    body: { kind: "resolve", body: { action: "fire", inputs: fire } },
  }),
);
check(resolved.outcomes.length > 0, `a resolve has an outcome: ${JSON.stringify(resolved)}`);

// The moderator's bot reads its feed (every campaign of the moderator) and acknowledges it all.
const bot = as(ok(await moderator.POST("/v1/bots", { body: { name: "TypeScript bot" } })).token);
const feed = ok(await bot.GET("/v1/bot/feed"));
check(
  feed.outcomes.some((o) => o.seq === resolved.seq && o.campaign_id === table.id),
  `the resolve's outcome in the feed: ${JSON.stringify(feed)}`,
);
for (const outcome of feed.outcomes) {
  ok(
    await bot.POST("/v1/campaigns/{id}/outcomes/{outcome_id}/ack", {
      params: { path: { id: outcome.campaign_id, outcome_id: outcome.id } },
      body: { forum_post_id: `typescript-${outcome.position}` },
    }),
  );
}
check(ok(await bot.GET("/v1/bot/feed")).outcomes.length === 0, "everything acknowledged");

// Anyone audits, with no token at all.
const anyone = as();
for (const campaign of [managed, table]) {
  const audit = ok(await anyone.GET("/v1/campaigns/{id}/audit", { params: { path: { id: campaign.id } } }));
  check(audit.ok && audit.differences.length === 0 && audit.posts >= 1, `the audit: ${JSON.stringify(audit)}`);
}

// Downloads are read as what they are: the export as NDJSON text, the map as a PNG's bytes.
const exported = ok(
  await anyone.GET("/v1/campaigns/{id}/export", { params: { path: { id: table.id } }, parseAs: "text" }),
);
const records = exported.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as unknown);
check(records.length > 0, "the export has records");
const picture = ok(
  await anyone.GET("/v1/campaigns/{id}/map.png", { params: { path: { id: managed.id } }, parseAs: "arrayBuffer" }),
);
check(new Uint8Array(picture).slice(0, 4).join() === "137,80,78,71", "a PNG");

console.log(
  `typescript flow: ok (resolve seq ${resolved.seq}, ${feed.outcomes.length} outcomes acknowledged, ${records.length} export records)`,
);
