-- The schema of a database after every migration (sql/) and every
-- stored function (functions/): pg_dump --schema-only, without comments,
-- settings and goose's own table. Function bodies are elided; each is in
-- functions/<name>.sql. Generated, do not edit:
--   go test ./workloads/internal/migrations -run TestSchema -update

CREATE FUNCTION public.confirm_payment(p_event bigint, p_order uuid, p_key text, p_payment text, p_amount numeric, p_currency text, p_max_seats integer, p_card text) RETURNS TABLE(r_fresh boolean, r_event bigint, r_customer text, r_session text, r_status text, r_amount text, r_currency text, r_expires timestamp with time zone, r_created timestamp with time zone, r_payment text, r_settled timestamp with time zone, r_reason text, r_seats text[], r_extra_payment text, r_extra_amount text, r_extra_currency text, r_extra_reason text, r_extra_at timestamp with time zone)
    LANGUAGE plpgsql
    AS $$ … $$;

CREATE FUNCTION public.hold_best(p_event bigint, p_order uuid, p_customer text, p_session text, p_currency text, p_ttl_ms bigint, p_max_seats integer, p_quantity integer, p_category text, p_section text, p_sections text[], p_together boolean, p_wheelchair integer, p_email text) RETURNS TABLE(expires_at timestamp with time zone, amount text, seat_id text, section text, row_label text, seat_no integer, category text, kind text)
    LANGUAGE plpgsql
    AS $$ … $$;

CREATE FUNCTION public.hold_limit(p_event bigint, p_customer text, p_max_seats integer, p_count integer) RETURNS void
    LANGUAGE plpgsql
    AS $$ … $$;

CREATE FUNCTION public.hold_seats(p_event bigint, p_order uuid, p_customer text, p_session text, p_currency text, p_ttl_ms bigint, p_max_seats integer, p_seats text[]) RETURNS TABLE(expires_at timestamp with time zone, amount text)
    LANGUAGE sql
    AS $$ … $$;

CREATE FUNCTION public.hold_seats(p_event bigint, p_order uuid, p_customer text, p_session text, p_currency text, p_ttl_ms bigint, p_max_seats integer, p_seats text[], p_email text) RETURNS TABLE(expires_at timestamp with time zone, amount text)
    LANGUAGE plpgsql
    AS $$ … $$;

CREATE FUNCTION public.hold_take(p_event bigint, p_order uuid, p_customer text, p_session text, p_currency text, p_ttl_ms bigint, p_max_seats integer, p_seats text[], p_email text) RETURNS TABLE(expires_at timestamp with time zone, amount text)
    LANGUAGE plpgsql
    AS $$ … $$;

CREATE FUNCTION public.lock_block(p_event bigint, p_section text, p_row integer, p_lo integer, p_hi integer, p_strands boolean, OUT seats text[], OUT busy text[]) RETURNS record
    LANGUAGE plpgsql
    AS $$ … $$;

CREATE FUNCTION public.outbox_notify() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ … $$;

CREATE FUNCTION public.seat_blocks(p_event bigint, p_category text, p_section text, p_sections text[], p_count integer, p_wheelchair integer, p_exclude text[], p_pick_below bigint, p_best_below bigint, p_orphans boolean, p_limit integer) RETURNS TABLE(section text, row_no integer, lo integer, orphan boolean, companions integer, score numeric)
    LANGUAGE sql STABLE
    AS $$ … $$;

CREATE TABLE public.checkin (
    ticket_id text NOT NULL,
    event_id bigint NOT NULL,
    gate text NOT NULL,
    generation integer NOT NULL,
    scanned_at timestamp with time zone NOT NULL,
    recorded_at timestamp with time zone DEFAULT now() NOT NULL,
    offline boolean DEFAULT false NOT NULL
);

CREATE TABLE public.checkin_conflict (
    id bigint NOT NULL,
    ticket_id text NOT NULL,
    event_id bigint NOT NULL,
    gate text NOT NULL,
    scanned_at timestamp with time zone NOT NULL,
    recorded_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE SEQUENCE public.checkin_conflict_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.checkin_conflict_id_seq OWNED BY public.checkin_conflict.id;

CREATE TABLE public.extra_payment (
    payment_id text NOT NULL,
    idempotency_key text NOT NULL,
    order_id uuid NOT NULL,
    amount numeric(12,2) NOT NULL,
    currency text NOT NULL,
    reason text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE TABLE public.mail_outbox (
    message_key text NOT NULL,
    kind text NOT NULL,
    event_id bigint NOT NULL,
    order_id text,
    ticket_ids text[] NOT NULL,
    recipient text NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    next_attempt_at timestamp with time zone DEFAULT now() NOT NULL,
    last_error text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    sent_at timestamp with time zone,
    CONSTRAINT mail_outbox_kind_check CHECK ((kind = ANY (ARRAY['order'::text, 'transfer'::text]))),
    CONSTRAINT mail_outbox_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'sent'::text])))
);

CREATE TABLE public.order_seat (
    order_id uuid NOT NULL,
    event_id bigint NOT NULL,
    seat_id text NOT NULL,
    section text NOT NULL,
    price numeric(12,2) NOT NULL
);

CREATE TABLE public.outbox (
    id bigint NOT NULL,
    topic text NOT NULL,
    key text NOT NULL,
    event_type text NOT NULL,
    payload jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    published_at timestamp with time zone
);

ALTER TABLE public.outbox ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.outbox_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.processed_message (
    consumer text NOT NULL,
    outbox_id bigint NOT NULL,
    processed_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE TABLE public.seat (
    event_id bigint NOT NULL,
    seat_id text NOT NULL,
    section text NOT NULL,
    row_no integer NOT NULL,
    seat_no integer NOT NULL,
    price numeric(12,2) NOT NULL,
    status text DEFAULT 'AVAILABLE'::text NOT NULL,
    held_by text,
    order_id uuid,
    hold_expires_at timestamp with time zone,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    category text,
    kind text DEFAULT 'seat'::text NOT NULL,
    row_label text,
    row_pos integer,
    best_order bigint,
    wheelchair boolean DEFAULT false NOT NULL,
    companion boolean DEFAULT false NOT NULL,
    restricted_view boolean DEFAULT false NOT NULL,
    aisle boolean DEFAULT false NOT NULL,
    CONSTRAINT seat_check CHECK (((status = 'AVAILABLE'::text) = (order_id IS NULL))),
    CONSTRAINT seat_hold_expiry CHECK (((status = 'HELD'::text) = (hold_expires_at IS NOT NULL))),
    CONSTRAINT seat_kind_check CHECK ((kind = ANY (ARRAY['seat'::text, 'standing'::text]))),
    CONSTRAINT seat_price_check CHECK ((price >= (0)::numeric)),
    CONSTRAINT seat_status_check CHECK ((status = ANY (ARRAY['AVAILABLE'::text, 'HELD'::text, 'SOLD'::text])))
);

CREATE TABLE public.ticket (
    ticket_id text NOT NULL,
    order_id text NOT NULL,
    seat_id text NOT NULL,
    event_id bigint NOT NULL,
    customer_id text NOT NULL,
    section text DEFAULT ''::text NOT NULL,
    price text DEFAULT ''::text NOT NULL,
    code text NOT NULL,
    outbox_id bigint,
    issued_at timestamp with time zone DEFAULT now() NOT NULL,
    holder_id text,
    holder_email text,
    generation integer DEFAULT 0 NOT NULL,
    revoked_at timestamp with time zone,
    CONSTRAINT ticket_holder_known CHECK (((holder_id IS NOT NULL) OR (holder_email IS NOT NULL)))
);

CREATE TABLE public.ticket_order (
    id uuid NOT NULL,
    customer_id text NOT NULL,
    event_id bigint NOT NULL,
    session_id text DEFAULT ''::text NOT NULL,
    status text DEFAULT 'PENDING'::text NOT NULL,
    amount numeric(12,2) NOT NULL,
    currency text NOT NULL,
    hold_expires_at timestamp with time zone NOT NULL,
    idempotency_key text,
    payment_id text,
    paid_amount numeric(12,2),
    paid_currency text,
    refund_reason text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    settled_at timestamp with time zone,
    card_fingerprint text,
    seat_limit integer,
    email text,
    CONSTRAINT ticket_order_status_check CHECK ((status = ANY (ARRAY['PENDING'::text, 'PAID'::text, 'EXPIRED'::text, 'REFUND_REQUIRED'::text, 'CANCELLED'::text])))
);

CREATE TABLE public.ticket_transfer (
    ticket_id text NOT NULL,
    generation integer NOT NULL,
    from_holder text NOT NULL,
    to_holder text,
    to_email text,
    transferred_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT ticket_transfer_recipient CHECK (((to_holder IS NOT NULL) OR (to_email IS NOT NULL)))
);

ALTER TABLE ONLY public.checkin_conflict ALTER COLUMN id SET DEFAULT nextval('public.checkin_conflict_id_seq'::regclass);

ALTER TABLE ONLY public.checkin_conflict
    ADD CONSTRAINT checkin_conflict_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.checkin_conflict
    ADD CONSTRAINT checkin_conflict_scan UNIQUE (ticket_id, gate, scanned_at);

ALTER TABLE ONLY public.checkin
    ADD CONSTRAINT checkin_pkey PRIMARY KEY (ticket_id);

ALTER TABLE ONLY public.extra_payment
    ADD CONSTRAINT extra_payment_idempotency_key_key UNIQUE (idempotency_key);

ALTER TABLE ONLY public.extra_payment
    ADD CONSTRAINT extra_payment_pkey PRIMARY KEY (payment_id);

ALTER TABLE ONLY public.mail_outbox
    ADD CONSTRAINT mail_outbox_pkey PRIMARY KEY (message_key);

ALTER TABLE ONLY public.order_seat
    ADD CONSTRAINT order_seat_pkey PRIMARY KEY (order_id, seat_id);

ALTER TABLE ONLY public.outbox
    ADD CONSTRAINT outbox_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.processed_message
    ADD CONSTRAINT processed_message_pkey PRIMARY KEY (consumer, outbox_id);

ALTER TABLE ONLY public.seat
    ADD CONSTRAINT seat_pkey PRIMARY KEY (event_id, seat_id);

ALTER TABLE ONLY public.ticket_order
    ADD CONSTRAINT ticket_order_idempotency_key_key UNIQUE (idempotency_key);

ALTER TABLE ONLY public.ticket_order
    ADD CONSTRAINT ticket_order_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.ticket
    ADD CONSTRAINT ticket_order_seat UNIQUE (order_id, seat_id);

ALTER TABLE ONLY public.ticket
    ADD CONSTRAINT ticket_pkey PRIMARY KEY (ticket_id);

ALTER TABLE ONLY public.ticket_transfer
    ADD CONSTRAINT ticket_transfer_pkey PRIMARY KEY (ticket_id, generation);

CREATE INDEX checkin_conflict_event ON public.checkin_conflict USING btree (event_id);

CREATE INDEX checkin_event ON public.checkin USING btree (event_id, scanned_at);

CREATE INDEX mail_outbox_due ON public.mail_outbox USING btree (next_attempt_at) WHERE (status = 'pending'::text);

CREATE INDEX mail_outbox_event ON public.mail_outbox USING btree (event_id, status);

CREATE INDEX outbox_published_at ON public.outbox USING btree (published_at) WHERE (published_at IS NOT NULL);

CREATE INDEX outbox_unpublished ON public.outbox USING btree (id) WHERE (published_at IS NULL);

CREATE INDEX seat_best ON public.seat USING btree (event_id, category, best_order) WHERE (status = 'AVAILABLE'::text);

CREATE INDEX seat_customer ON public.seat USING btree (event_id, held_by) WHERE (status <> 'AVAILABLE'::text);

CREATE INDEX seat_held_expiry ON public.seat USING btree (event_id, hold_expires_at) WHERE (status = 'HELD'::text);

CREATE INDEX seat_order ON public.seat USING btree (order_id) WHERE (order_id IS NOT NULL);

CREATE INDEX seat_row_pos ON public.seat USING btree (event_id, section, row_no, row_pos) WHERE (status = 'AVAILABLE'::text);

CREATE INDEX ticket_event ON public.ticket USING btree (event_id);

CREATE INDEX ticket_holder ON public.ticket USING btree (holder_id);

CREATE INDEX ticket_holder_email ON public.ticket USING btree (lower(holder_email)) WHERE (holder_email IS NOT NULL);

CREATE INDEX ticket_order_card ON public.ticket_order USING btree (event_id, card_fingerprint) WHERE (card_fingerprint IS NOT NULL);

CREATE INDEX ticket_order_pending_expiry ON public.ticket_order USING btree (event_id, hold_expires_at) WHERE (status = 'PENDING'::text);

CREATE TRIGGER outbox_notify AFTER INSERT ON public.outbox FOR EACH ROW EXECUTE FUNCTION public.outbox_notify();

ALTER TABLE ONLY public.checkin_conflict
    ADD CONSTRAINT checkin_conflict_ticket_id_fkey FOREIGN KEY (ticket_id) REFERENCES public.ticket(ticket_id);

ALTER TABLE ONLY public.checkin
    ADD CONSTRAINT checkin_ticket_id_fkey FOREIGN KEY (ticket_id) REFERENCES public.ticket(ticket_id);

ALTER TABLE ONLY public.extra_payment
    ADD CONSTRAINT extra_payment_order_id_fkey FOREIGN KEY (order_id) REFERENCES public.ticket_order(id);

ALTER TABLE ONLY public.order_seat
    ADD CONSTRAINT order_seat_order_id_fkey FOREIGN KEY (order_id) REFERENCES public.ticket_order(id);

ALTER TABLE ONLY public.seat
    ADD CONSTRAINT seat_order_id_fkey FOREIGN KEY (order_id) REFERENCES public.ticket_order(id);

ALTER TABLE ONLY public.ticket_transfer
    ADD CONSTRAINT ticket_transfer_ticket_id_fkey FOREIGN KEY (ticket_id) REFERENCES public.ticket(ticket_id);
