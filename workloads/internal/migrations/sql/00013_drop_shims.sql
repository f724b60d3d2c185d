-- +goose Up
-- The functions kept for replicas of older versions during a rolling
-- update, which neither this version nor the one before calls: hold_refuse
-- (00005) and the seven-argument confirm_payment (00010). The latter skips the card's and
-- the order's seat limits, so a stale replica still calling it sold past
-- them. The ones in use are in functions/, applied after every migration.
DROP FUNCTION IF EXISTS hold_refuse(boolean, text, text);
DROP FUNCTION IF EXISTS confirm_payment(bigint, uuid, text, text, numeric, text, integer);

-- +goose Down
-- Nothing comes back: no version this rolls back to calls them.
