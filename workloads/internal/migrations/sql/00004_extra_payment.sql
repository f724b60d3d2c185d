-- +goose Up
-- Payments that bought nothing because their order was already settled by
-- another payment (PAID or REFUND_REQUIRED). Each is refunded exactly once:
-- the payment id is the key, so a redelivered callback finds its row and
-- repeats the answer instead of writing a second refund-requested event.
CREATE TABLE extra_payment (
    payment_id      text          PRIMARY KEY,
    idempotency_key text          NOT NULL UNIQUE,
    order_id        uuid          NOT NULL REFERENCES ticket_order (id),
    amount          numeric(12,2) NOT NULL,
    currency        text          NOT NULL,
    reason          text          NOT NULL,
    created_at      timestamptz   NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE extra_payment;
