-- +goose Up
-- This version added the "unknown:" hint to hold_seats's refusal; the
-- function is functions/hold_seats.sql now, applied after every migration.

-- +goose Down
