-- +goose Up
-- The seat limit per customer holds per payment card too, across
-- identities: a scalper with many accounts pays with few cards. The
-- payment provider's card fingerprint (Stripe's
-- payment_method_details.card.fingerprint) is kept on PAID orders only,
-- the one place confirm_payment's card limit reads it.
ALTER TABLE ticket_order ADD COLUMN card_fingerprint text;
CREATE INDEX ticket_order_card ON ticket_order (event_id, card_fingerprint) WHERE card_fingerprint IS NOT NULL;

-- +goose Down
DROP INDEX ticket_order_card;
ALTER TABLE ticket_order DROP COLUMN card_fingerprint;
