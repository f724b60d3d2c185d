-- +goose NO TRANSACTION
-- +goose Up
-- A seat has a hold expiry exactly while it is HELD. The sweeper's release
-- and the release of one order test hold_expires_at alone, not status, so
-- that the planner reads the seats they claim by key rather than through a
-- partial index on status; this constraint makes the rule they rely on
-- the database's. Rows that break it (none that ticketfair writes) are
-- mended first: an expiry left on a seat that is not held is dropped, and
-- a held seat without one expires now, for the sweeper to free. The
-- constraint is added NOT VALID and validated in its own statement, so a
-- live sale's holds wait only for the two brief catalog changes, not for
-- the scan; DROP IF EXISTS lets a failed run go again.
UPDATE seat SET hold_expires_at = NULL WHERE status <> 'HELD' AND hold_expires_at IS NOT NULL;
UPDATE seat SET hold_expires_at = now() WHERE status = 'HELD' AND hold_expires_at IS NULL;
ALTER TABLE seat DROP CONSTRAINT IF EXISTS seat_hold_expiry,
    ADD CONSTRAINT seat_hold_expiry CHECK ((status = 'HELD') = (hold_expires_at IS NOT NULL)) NOT VALID;
ALTER TABLE seat VALIDATE CONSTRAINT seat_hold_expiry;

-- +goose Down
ALTER TABLE seat DROP CONSTRAINT IF EXISTS seat_hold_expiry;
