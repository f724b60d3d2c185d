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
