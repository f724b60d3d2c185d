-- +goose Up
-- Ticket mails to send: a row is written in the transaction that issues the
-- tickets (or completes a transfer) and sent by the tickets service's mail
-- workers. The key makes a redelivered message enqueue nothing.
CREATE TABLE mail_outbox (
    message_key     text        PRIMARY KEY,  -- also the Message-ID's local part
    kind            text        NOT NULL CHECK (kind IN ('order', 'transfer')),
    event_id        bigint      NOT NULL,
    order_id        text,                     -- the paid order (order mails)
    ticket_ids      text[]      NOT NULL,
    recipient       text        NOT NULL,
    status          text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent')),
    attempts        int         NOT NULL DEFAULT 0,
    -- When a worker may take the row: after a failure's backoff, or after
    -- the lease of a worker that died while sending.
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_error      text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    sent_at         timestamptz
);
-- The workers' work list: pending rows by due time.
CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt_at) WHERE status = 'pending';
-- Stats per event.
CREATE INDEX mail_outbox_event ON mail_outbox (event_id, status);

-- +goose Down
DROP TABLE mail_outbox;
