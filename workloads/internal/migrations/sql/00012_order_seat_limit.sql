-- +goose Up
-- An order remembers the seat limit it was held under (hold_seats's
-- p_max_seats: a presale's own limit, or the event's), and a payment
-- checks that limit, not the one its caller passes, when it is lower. A
-- payment that completes after its hold expired re-takes the seats, and
-- checked the event's limit: a presale customer (limit 2) whose hold
-- expired, who held again and paid, ended with 4 seats when the first
-- payment completed late. The card's limit follows the same figure. Orders
-- held before this have no limit (NULL) and are checked as before.
ALTER TABLE ticket_order ADD COLUMN seat_limit integer;

-- +goose Down
-- The column stays: the code before this reads it nowhere.
