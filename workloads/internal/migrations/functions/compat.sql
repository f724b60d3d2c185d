-- What a rolling update from the version before still needs, applied
-- after every other function file. Each entry says when it goes.
--
-- confirm_payment_within: 00012 renamed the card's confirm_payment to it
-- and made confirm_payment a wrapper calling it; confirm_payment.sql is
-- the whole payment again. It is dropped here, in the transaction that
-- replaces the wrapper, not in a migration, which would commit first and
-- fail the payments in between. Remove in 0.2.0, when every database has
-- run this step.
DROP FUNCTION IF EXISTS confirm_payment_within(bigint, uuid, text, text, numeric, text, integer, text);

-- hold_seats without p_email: 00016 added the buyer's address; booking
-- pods of the version before call the eight arguments until they are
-- replaced. Remove in 0.2.0.
CREATE OR REPLACE FUNCTION hold_seats(p_event bigint, p_order uuid, p_customer text, p_session text, p_currency text,
                                      p_ttl_ms bigint, p_max_seats integer, p_seats text[])
RETURNS TABLE (expires_at timestamptz, amount text)
LANGUAGE sql AS $$
    SELECT * FROM hold_seats(p_event, p_order, p_customer, p_session, p_currency, p_ttl_ms, p_max_seats, p_seats, NULL)
$$;
