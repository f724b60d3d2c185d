-- +goose Up
-- Booking: orders, seats and the seats of each order. All times are written
-- from the database clock (now()), so pods with skewed clocks agree.

CREATE TABLE ticket_order (
    id              uuid PRIMARY KEY,
    customer_id     text           NOT NULL,
    event_id        bigint         NOT NULL,
    session_id      text           NOT NULL DEFAULT '',  -- queue session, released after payment
    status          text           NOT NULL DEFAULT 'PENDING'
        CHECK (status IN ('PENDING', 'PAID', 'EXPIRED', 'REFUND_REQUIRED', 'CANCELLED')),
    amount          numeric(12,2)  NOT NULL,
    currency        text           NOT NULL,
    hold_expires_at timestamptz    NOT NULL,
    -- The payment that settled the order (PAID or REFUND_REQUIRED); unique so
    -- a repeated callback can never settle a second order.
    idempotency_key text UNIQUE,
    payment_id      text,
    paid_amount     numeric(12,2),
    paid_currency   text,
    refund_reason   text,
    created_at      timestamptz    NOT NULL DEFAULT now(),
    updated_at      timestamptz    NOT NULL DEFAULT now(),
    settled_at      timestamptz
);
-- The sweeper's work list: pending orders by expiry.
CREATE INDEX ticket_order_pending_expiry ON ticket_order (event_id, hold_expires_at) WHERE status = 'PENDING';
-- A customer's orders (GET /orders, tickets service).
CREATE INDEX ticket_order_customer ON ticket_order (event_id, customer_id);

CREATE TABLE seat (
    event_id        bigint        NOT NULL,
    seat_id         text          NOT NULL,  -- "<section>-<row>-<seat>", e.g. "A-12-7"
    section         text          NOT NULL,
    row_no          integer       NOT NULL,
    seat_no         integer       NOT NULL,
    price           numeric(12,2) NOT NULL CHECK (price >= 0),
    status          text          NOT NULL DEFAULT 'AVAILABLE' CHECK (status IN ('AVAILABLE', 'HELD', 'SOLD')),
    held_by         text,                    -- customer of a HELD or SOLD seat
    order_id        uuid REFERENCES ticket_order (id),
    hold_expires_at timestamptz,
    updated_at      timestamptz   NOT NULL DEFAULT now(),
    PRIMARY KEY (event_id, seat_id),
    CHECK ((status = 'AVAILABLE') = (order_id IS NULL))
);
-- The sweeper's work list: held seats by expiry.
CREATE INDEX seat_held_expiry ON seat (event_id, hold_expires_at) WHERE status = 'HELD';
-- The per-customer seat limit.
CREATE INDEX seat_customer ON seat (event_id, held_by) WHERE status <> 'AVAILABLE';
CREATE INDEX seat_order ON seat (order_id) WHERE order_id IS NOT NULL;

-- The seats an order was created with (kept after the hold ends, for
-- tickets and refunds).
CREATE TABLE order_seat (
    order_id uuid          NOT NULL REFERENCES ticket_order (id),
    event_id bigint        NOT NULL,
    seat_id  text          NOT NULL,
    section  text          NOT NULL,
    price    numeric(12,2) NOT NULL,
    PRIMARY KEY (order_id, seat_id)
);

-- +goose Down
DROP TABLE order_seat;
DROP TABLE seat;
DROP TABLE ticket_order;
