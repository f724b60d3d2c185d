-- +goose Up
-- Places as the venue model describes them (booking's SeedVenue): a seat
-- or a standing place (kind), in a price category, with what best
-- available needs. best_order ranks the places of an event, best first:
-- the row's rank (section rank, section, row) times 100000, plus the
-- seat's rank in its row (distance to the row's middle), so a row's seats
-- are contiguous in it and best_order / 100000 names the row. row_pos is
-- the seat's place in its row from the left, one more across a gap: two
-- seats are next to each other when their row_pos differ by one. Blocked
-- seats are not seeded, so they break adjacency the same way. A standing
-- area is one row (row_no 0) whose places are sold by count, its row_pos
-- their number.
ALTER TABLE seat
    ADD COLUMN category        text,
    ADD COLUMN kind            text    NOT NULL DEFAULT 'seat' CHECK (kind IN ('seat', 'standing')),
    ADD COLUMN row_label       text,
    ADD COLUMN row_pos         integer,
    ADD COLUMN best_order      bigint,
    ADD COLUMN wheelchair      boolean NOT NULL DEFAULT false,
    ADD COLUMN companion       boolean NOT NULL DEFAULT false,
    ADD COLUMN restricted_view boolean NOT NULL DEFAULT false,
    ADD COLUMN aisle           boolean NOT NULL DEFAULT false;

-- Seats seeded before: their section is their category, their rows are
-- numbered and unbroken, ranked in section order, front row first.
UPDATE seat s
   SET category = s.section, row_label = s.row_no::text, row_pos = s.seat_no,
       best_order = r.row_rank * 100000 + r.seat_rank
  FROM (SELECT event_id, seat_id,
               dense_rank() OVER (PARTITION BY event_id ORDER BY section, row_no) AS row_rank,
               row_number() OVER (PARTITION BY event_id, section, row_no ORDER BY abs(2 * seat_no - lo - hi), seat_no) AS seat_rank
          FROM (SELECT event_id, seat_id, section, row_no, seat_no,
                       min(seat_no) OVER w AS lo, max(seat_no) OVER w AS hi
                  FROM seat WINDOW w AS (PARTITION BY event_id, section, row_no)) m) r
 WHERE s.event_id = r.event_id AND s.seat_id = r.seat_id AND s.best_order IS NULL;

-- Best available reads the AVAILABLE places of a category in best_order,
-- and of a row (or a standing area) by position. Only AVAILABLE ones: a
-- sale's first rows are soon all held, and an index of the places not
-- sold had each hold step over every one of them (4,500 at the front of
-- a 50,000-seat sale cost 2.5 ms a statement). An expired hold is
-- available to best available once the sweeper has freed it.
CREATE INDEX seat_best ON seat (event_id, category, best_order) WHERE status = 'AVAILABLE';
CREATE INDEX seat_row_pos ON seat (event_id, section, row_no, row_pos) WHERE status = 'AVAILABLE';

-- +goose Down
DROP INDEX seat_row_pos;
DROP INDEX seat_best;
ALTER TABLE seat DROP COLUMN aisle, DROP COLUMN restricted_view, DROP COLUMN companion, DROP COLUMN wheelchair,
    DROP COLUMN best_order, DROP COLUMN row_pos, DROP COLUMN row_label, DROP COLUMN kind, DROP COLUMN category;
