-- +goose NO TRANSACTION
-- +goose Up
-- ticket_order_customer (event_id, customer_id) served no query: orders are
-- read by id or by idempotency key. It cost every hold an index entry, and
-- it made the order's lookup by id and event pick a plan that reads every
-- order of the event. A generic plan prepared while ticket_order has never
-- been analyzed (a sale's first minute: the table starts empty) costs an
-- index scan on event_id the same as one on the primary key, and some
-- connections kept the event_id scan for minutes of a sale, filtering
-- thousands of orders per payment. The primary key is now the only index
-- such a lookup can use. CONCURRENTLY, so a live sale's holds are not
-- blocked while it goes.
DROP INDEX CONCURRENTLY IF EXISTS ticket_order_customer;

-- +goose Down
CREATE INDEX CONCURRENTLY IF NOT EXISTS ticket_order_customer ON ticket_order (event_id, customer_id);
