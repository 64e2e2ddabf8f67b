-- A campaign's players, in the order they were issued: GET /v1/campaigns/{id}/players.
CREATE INDEX principals_by_campaign ON principals (campaign_id, created_at);
