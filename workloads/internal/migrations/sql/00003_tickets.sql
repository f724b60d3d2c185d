-- +goose Up
-- Tickets issued by `ticketfair tickets` from ticket-issued messages. The
-- order, seat, event and customer come from the message itself: this table
-- has no foreign keys into the booking schema, so the tickets service can run
-- against its own database.
CREATE TABLE ticket (
    ticket_id   text        PRIMARY KEY,     -- derived from (order_id, seat_id)
    order_id    text        NOT NULL,
    seat_id     text        NOT NULL,
    event_id    bigint      NOT NULL,
    customer_id text        NOT NULL,
    section     text        NOT NULL DEFAULT '',
    price       text        NOT NULL DEFAULT '',
    code        text        NOT NULL,        -- signed code a gate verifies offline
    outbox_id   bigint,                      -- message that issued it
    issued_at   timestamptz NOT NULL DEFAULT now(),
    -- One ticket per seat of an order: a duplicate or replayed message
    -- inserts nothing.
    CONSTRAINT ticket_order_seat UNIQUE (order_id, seat_id)
);
CREATE INDEX ticket_event ON ticket (event_id);

-- Messages a consumer has already applied, keyed by the outbox id the relay
-- puts in every message's header: a redelivery is recognised before any work.
CREATE TABLE processed_message (
    consumer     text        NOT NULL,
    outbox_id    bigint      NOT NULL,
    processed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer, outbox_id)
);

-- +goose Down
DROP TABLE processed_message;
DROP TABLE ticket;
