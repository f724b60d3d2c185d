-- +goose Up
-- The buyer's verified email address, from the identity token at hold
-- time: the paid order's ticket-issued event carries it to the mailer.
ALTER TABLE ticket_order ADD COLUMN email text;

-- +goose Down
DROP FUNCTION IF EXISTS hold_seats(bigint, uuid, text, text, text, bigint, integer, text[], text);
ALTER TABLE ticket_order DROP COLUMN email;
