-- How a player is reached outside Adjutant, as the campaign's moderator recorded it: the forum
-- handle the bot mentions when it is the player's turn, a Discord user id, an email address.
-- Not part of the log: the moderator changes it as people change.
CREATE TABLE player_contacts (
    principal_id    UUID PRIMARY KEY REFERENCES principals (id),
    forum_handle    TEXT,
    discord_user_id TEXT,
    email           TEXT,
    updated_at      TIMESTAMPTZ NOT NULL
);
