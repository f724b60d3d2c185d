-- +goose Up
-- The transactional outbox: rows are written in the same transaction as the
-- state change they announce, and published to Kafka by the relay.
CREATE TABLE outbox (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    topic        text        NOT NULL,
    key          text        NOT NULL,          -- Kafka message key (the order id)
    event_type   text        NOT NULL,
    payload      jsonb       NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    published_at timestamptz
);
-- The relay's work list: unpublished rows in id order.
CREATE INDEX outbox_unpublished ON outbox (id) WHERE published_at IS NULL;
-- Pruning published rows by age.
CREATE INDEX outbox_published_at ON outbox (published_at) WHERE published_at IS NOT NULL;

-- Its trigger, which wakes the relay, is functions/outbox_notify.sql.

-- +goose Down
DROP TABLE outbox;
