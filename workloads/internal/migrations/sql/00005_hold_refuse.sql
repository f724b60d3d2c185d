-- +goose Up
-- This version created hold_refuse, which ended the pipelined hold's batch
-- when a check refused; hold_seats replaced that hold and 00013 drops it.
-- Stored functions are in functions/, applied after every migration.

-- +goose Down
