-- +goose Up
-- This version created hold_seats, the hold as one call; it is
-- functions/hold_seats.sql now, applied after every migration.

-- +goose Down
