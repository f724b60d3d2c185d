-- seat_blocks lists the blocks of p_count adjacent free seats that best
-- available may take (hold_best): in category p_category, in section
-- p_section and among p_sections when they are set, of seats below
-- best_order p_pick_below, p_exclude counted as taken. It reads the seats
-- below p_best_below, which hold_best sets to 4 more than p_pick_below:
-- in a row, best_order ranks the seats by their distance to its middle,
-- so the seats read reach two beyond those it picks from on either side,
-- enough to tell whether a block strands one. A free seat is AVAILABLE
-- (an expired hold once the sweeper freed it); adjacent seats are in one
-- row with row_pos one apart, so a gap, a blocked seat or a taken one
-- ends a run.
-- A block strands one seat (orphan) when it leaves a single free seat of
-- its run on either side; such blocks are listed only with p_orphans. A
-- block without p_wheelchair takes no wheelchair place; one with holds
-- exactly p_wheelchair, each next to a companion seat of the block. It
-- answers at most p_limit blocks, best first: no orphan, fewest companion
-- seats, lowest score (the sum of the seats' best_order). A block is its
-- row (section, row_no) and the row_pos of its first seat, lo: its seats
-- are those of row_pos lo to lo + p_count - 1.
CREATE OR REPLACE FUNCTION seat_blocks(p_event bigint, p_category text, p_section text, p_sections text[],
                                       p_count integer, p_wheelchair integer, p_exclude text[], p_pick_below bigint,
                                       p_best_below bigint, p_orphans boolean, p_limit integer)
RETURNS TABLE (section text, row_no integer, lo integer, orphan boolean, companions integer, score numeric)
LANGUAGE sql STABLE AS $$
    WITH free AS (
        SELECT s.seat_id, s.section, s.row_no, s.row_pos, s.best_order, s.wheelchair, s.companion,
               s.row_pos - row_number() OVER (PARTITION BY s.section, s.row_no ORDER BY s.row_pos) AS run
          FROM seat s
         WHERE s.event_id = p_event AND s.category = p_category AND s.status = 'AVAILABLE'
           AND s.best_order < p_best_below AND s.kind = 'seat'
           AND (p_section IS NULL OR s.section = p_section)
           AND (p_sections IS NULL OR s.section = ANY (p_sections))
           AND s.seat_id <> ALL (p_exclude)
    ), runs AS (
        SELECT f.*,
               row_number() OVER run AS idx,
               count(*) OVER (PARTITION BY f.section, f.row_no, f.run) AS run_len,
               -- A wheelchair place next to a companion seat, counted in
               -- a block that holds the companion: whole inside it, less
               -- its right neighbour at the block's start, its left at the
               -- end.
               (f.wheelchair AND (coalesce(lag(f.companion) OVER run, false) OR coalesce(lead(f.companion) OVER run, false)))::int AS paired,
               (f.wheelchair AND coalesce(lag(f.companion) OVER run, false)
                AND NOT coalesce(lead(f.companion) OVER run, false))::int AS paired_left_only,
               (f.wheelchair AND coalesce(lead(f.companion) OVER run, false)
                AND NOT coalesce(lag(f.companion) OVER run, false))::int AS paired_right_only
          FROM free f
        WINDOW run AS (PARTITION BY f.section, f.row_no, f.run ORDER BY f.row_pos)
    ), blocks AS (
        -- Each seat starts a block of the p_count seats from it. Sums
        -- over the moving frame, no array of its seats: an array per seat
        -- cost more than the rest of the statement.
        SELECT r.section, r.row_no, r.row_pos, r.idx, r.run_len, r.paired_left_only AS first_left_only,
               sum(r.best_order) OVER blk AS score,
               max(r.best_order) OVER blk AS worst,
               sum(r.wheelchair::int) OVER blk AS wheelchairs,
               sum(r.companion::int) OVER blk AS companions,
               sum(r.paired) OVER blk AS paired,
               last_value(r.paired_right_only) OVER blk AS last_right_only
          FROM runs r
        WINDOW blk AS (PARTITION BY r.section, r.row_no, r.run ORDER BY r.row_pos
                       ROWS BETWEEN CURRENT ROW AND p_count - 1 FOLLOWING)
    ), fit AS (
        SELECT b.*, b.idx = 2 OR b.run_len - b.idx - p_count + 1 = 1 AS orphan
          FROM blocks b
         WHERE b.idx + p_count - 1 <= b.run_len AND b.worst < p_pick_below
           AND b.wheelchairs = p_wheelchair
           AND (p_wheelchair = 0 OR (b.companions >= p_wheelchair
                AND b.paired - b.first_left_only - b.last_right_only >= p_wheelchair))
    )
    SELECT f.section, f.row_no, f.row_pos, f.orphan, f.companions::int, f.score
      FROM fit f
     WHERE p_orphans OR NOT f.orphan
     ORDER BY f.orphan, f.companions, f.score
     LIMIT p_limit
$$;
