-- +goose Up
-- This version created confirm_payment without the card (seven
-- arguments); 00013 drops it. The payment is functions/confirm_payment.sql
-- now, applied after every migration.

-- +goose Down
