-- flakeid 0.1.0 -> 0.2.0: ALTER EXTENSION flakeid UPDATE TO '0.2.0'.
-- The result equals a fresh CREATE EXTENSION flakeid VERSION '0.2.0' (tests/postgres/run.py
-- compares the two catalogs). Everything else 0.2.0 changes is in the library.
\echo Use "ALTER EXTENSION flakeid UPDATE TO '0.2.0'" to load this file. \quit

-- The forms that read flakeid.layout are STABLE: their result depends on a setting,
-- not on their arguments alone. (The forms with a layout name stay IMMUTABLE.)
-- Indexes and generated columns made with these forms under 0.1.0 keep their values:
-- remake them with the layout-name form (docs/postgres.md, "Upgrading").
ALTER FUNCTION @extschema@.flakeid_decompose(bigint) STABLE;
ALTER FUNCTION @extschema@.flakeid_timestamp(bigint) STABLE;
ALTER FUNCTION @extschema@.flakeid_compose(timestamp with time zone, bigint, bigint) STABLE;
ALTER FUNCTION @extschema@.flakeid_first_at(timestamp with time zone) STABLE;
ALTER FUNCTION @extschema@.flakeid_last_at(timestamp with time zone) STABLE;
ALTER FUNCTION @extschema@.flakeid_range(tstzrange) STABLE;

-- flakeid_in_range: every name in the (inlined) bodies qualified, so that neither a
-- search_path without the extension's schema nor a look-alike elsewhere changes them.
CREATE OR REPLACE FUNCTION @extschema@.flakeid_in_range(id bigint, r tstzrange) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT NOT pg_catalog.isempty(@extschema@.flakeid_range(r))
       AND id OPERATOR(pg_catalog.>=) coalesce(pg_catalog.lower(@extschema@.flakeid_range(r)), 0::pg_catalog.int8)
       AND id OPERATOR(pg_catalog.<=) coalesce(pg_catalog.upper(@extschema@.flakeid_range(r)) OPERATOR(pg_catalog.-) 1::pg_catalog.int8, 9223372036854775807::pg_catalog.int8)
$$;
CREATE OR REPLACE FUNCTION @extschema@.flakeid_in_range(id bigint, r tstzrange, layout text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT NOT pg_catalog.isempty(@extschema@.flakeid_range(r, layout))
       AND id OPERATOR(pg_catalog.>=) coalesce(pg_catalog.lower(@extschema@.flakeid_range(r, layout)), 0::pg_catalog.int8)
       AND id OPERATOR(pg_catalog.<=) coalesce(pg_catalog.upper(@extschema@.flakeid_range(r, layout)) OPERATOR(pg_catalog.-) 1::pg_catalog.int8, 9223372036854775807::pg_catalog.int8)
$$;

-- Failover: the confirmation after a promotion (superusers only) and the state
-- (with the lease's, when flakeid.lease is set).
CREATE  FUNCTION @extschema@."flakeid_confirm_node"(
	"node" bigint /* i64 */
) RETURNS TEXT /* String */
STRICT VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'flakeid_confirm_node_wrapper';
REVOKE ALL ON FUNCTION @extschema@.flakeid_confirm_node(bigint) FROM PUBLIC;

-- Restores and logical copies: IDs continue above the largest one restored
-- (superusers only).
CREATE  FUNCTION @extschema@."flakeid_resume_after"(
	"id" bigint /* i64 */
) RETURNS timestamp with time zone /* TimestampWithTimeZone */
STRICT VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'flakeid_resume_after_wrapper';
REVOKE ALL ON FUNCTION @extschema@.flakeid_resume_after(bigint) FROM PUBLIC;

CREATE  FUNCTION @extschema@."flakeid_status"() RETURNS TABLE (
	"state" TEXT,  /* String */
	"node" bigint,  /* Option < i64 > */
	"timeline" bigint,  /* Option < i64 > */
	"owner_node" bigint,  /* Option < i64 > */
	"owner_timeline" bigint,  /* Option < i64 > */
	"high_water_mark" timestamp with time zone,  /* Option < TimestampWithTimeZone > */
	"lease" TEXT,  /* Option < String > */
	"lease_state" TEXT,  /* Option < String > */
	"lease_valid_until" timestamp with time zone,  /* Option < TimestampWithTimeZone > */
	"resumed_after" timestamp with time zone,  /* Option < TimestampWithTimeZone > */
	"resumed_because" TEXT,  /* Option < String > */
	"uuid_high_water_mark" timestamp with time zone,  /* Option < TimestampWithTimeZone > */
	"uuid_lead_ms" bigint,  /* Option < i64 > */
	"last_refusal" TEXT,  /* Option < String > */
	"uuid_last_refusal" TEXT,  /* Option < String > */
	"peer_node" TEXT  /* Option < String > */
)
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'flakeid_status_wrapper';

-- Sealed IDs (docs/sealing.md): the forms without a layout name read
-- flakeid.layout (STABLE), those with one are IMMUTABLE; flakeid_next_sealed()
-- seals with flakeid.seal_key.
CREATE  FUNCTION @extschema@."flakeid_seal"(
	"id" bigint, /* i64 */
	"key" bytea, /* & [u8] */
	"tweak" bytea DEFAULT ''::bytea /* & [u8] */
) RETURNS bigint /* i64 */
STABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'flakeid_seal_server_wrapper';

CREATE  FUNCTION @extschema@."flakeid_seal"(
	"id" bigint, /* i64 */
	"key" bytea, /* & [u8] */
	"tweak" bytea, /* & [u8] */
	"layout" TEXT /* & str */
) RETURNS bigint /* i64 */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'flakeid_seal_wrapper';

CREATE  FUNCTION @extschema@."flakeid_unseal"(
	"id" bigint, /* i64 */
	"key" bytea, /* & [u8] */
	"tweak" bytea DEFAULT ''::bytea /* & [u8] */
) RETURNS bigint /* i64 */
STABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'flakeid_unseal_server_wrapper';

CREATE  FUNCTION @extschema@."flakeid_unseal"(
	"id" bigint, /* i64 */
	"key" bytea, /* & [u8] */
	"tweak" bytea, /* & [u8] */
	"layout" TEXT /* & str */
) RETURNS bigint /* i64 */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'flakeid_unseal_wrapper';

CREATE  FUNCTION @extschema@."flakeid_next_sealed"() RETURNS bigint /* i64 */
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'flakeid_next_sealed_wrapper';

-- The generator's statistics, the fields of the engine's Stats for the
-- whole server.
CREATE  FUNCTION @extschema@."flakeid_stats"() RETURNS TABLE (
	"ids_issued" bigint,  /* i64 */
	"tick_waits" bigint,  /* i64 */
	"tick_wait_us" bigint,  /* i64 */
	"lead_ms" bigint,  /* i64 */
	"clock_rollbacks" bigint,  /* i64 */
	"max_rollback_ms" bigint,  /* i64 */
	"lease_state" TEXT,  /* Option < String > */
	"lease_remaining_ms" bigint,  /* Option < i64 > */
	"refusals" bigint,  /* i64 */
	"uuid_refusals" bigint,  /* i64 */
	"uuid_lead_ms" bigint,  /* i64 */
	"repair_waits" bigint,  /* i64 */
	"repair_wait_us" bigint  /* i64 */
)
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'flakeid_stats_wrapper';

-- New in 0.2.0: the way in for an existing table (src/convert_sequence.rs holds the
-- same body; run.py's upgrade section compares them).
CREATE FUNCTION @extschema@.convert_sequence_to_flakeid(tbl regclass, col name, lock_wait interval DEFAULT '2s') RETURNS bigint
LANGUAGE plpgsql VOLATILE STRICT SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    num int2;
    typ oid;
    ident "char";
    def text;
    seq regclass;
    top bigint;
    lowest bigint;
    narrow text;
    alters text;
    others text;
    caller_lock_timeout text := current_setting('lock_timeout');
    holders text;
BEGIN
    SELECT a.attnum, a.atttypid, a.attidentity, pg_get_expr(d.adbin, d.adrelid) INTO num, typ, ident, def
      FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE a.attrelid = tbl AND a.attname = col AND a.attnum > 0 AND NOT a.attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'convert_sequence_to_flakeid: % has no column %', tbl, quote_ident(col)
            USING ERRCODE = 'undefined_column';
    END IF;
    IF typ <> 'bigint'::regtype THEN
        RAISE EXCEPTION 'convert_sequence_to_flakeid: %.% is %, and flakeid IDs need bigint', tbl, quote_ident(col),
            format_type(typ, NULL)
            USING ERRCODE = 'datatype_mismatch',
                  HINT = format('ALTER TABLE %s ALTER COLUMN %I TYPE bigint first (it rewrites the table), and every column that references it.', tbl, col);
    END IF;
    IF ident = '' AND (def IS NULL OR def !~ '^nextval\(') THEN
        RAISE EXCEPTION 'convert_sequence_to_flakeid: %.% has no sequence or IDENTITY default (its default: %)', tbl,
            quote_ident(col), coalesce(def, 'none')
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    -- A default cannot refuse an explicit value as GENERATED ALWAYS does.
    IF ident = 'a' THEN
        RAISE EXCEPTION 'convert_sequence_to_flakeid: %.% is GENERATED ALWAYS AS IDENTITY, which refuses explicit values; a DEFAULT flakeid_next() would accept them', tbl, quote_ident(col)
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'After the conversion an INSERT could give its own id (OVERRIDING USER VALUE would keep it), and a copied row its old one.',
                  HINT = format('If inserts may give their own ids from now on: ALTER TABLE %s ALTER COLUMN %I SET GENERATED BY DEFAULT, then convert; otherwise keep the identity.', tbl, col);
    END IF;
    -- Foreign keys whose columns could not hold an ID of flakeid_next().
    SELECT string_agg(format('%s.%I (%s)', r, c, t), ', ' ORDER BY r::text, c),
           string_agg(format('ALTER TABLE %s ALTER COLUMN %I TYPE bigint;', r, c), ' ' ORDER BY r::text, c)
      INTO narrow, alters
      FROM (SELECT DISTINCT k.conrelid::regclass AS r, a.attname AS c, format_type(a.atttypid, a.atttypmod) AS t
              FROM pg_constraint k
             CROSS JOIN LATERAL unnest(k.confkey, k.conkey) AS u(referenced, referencing)
              JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.referencing
             WHERE k.contype = 'f' AND k.confrelid = tbl AND u.referenced = num AND k.conparentid = 0
               AND a.atttypid IN ('smallint'::regtype, 'integer'::regtype)) f;
    IF narrow IS NOT NULL THEN
        RAISE EXCEPTION 'convert_sequence_to_flakeid: %.% is referenced by columns narrower than bigint, which could not hold its new IDs: %',
            tbl, quote_ident(col), narrow
            USING ERRCODE = 'datatype_mismatch',
                  HINT = alters || ' first (each rewrites its table), then convert.';
    END IF;
    -- The lock the ALTERs below end with, taken first: a lock taken weaker and
    -- raised later deadlocks with a transaction that read the table and then
    -- writes to it. Readers and writers wait until this transaction ends.
    -- Queued for it, the lock holds up every later reader and writer of the table:
    -- wait at most lock_wait (0: as long as it takes), then name who holds the table.
    PERFORM set_config('lock_timeout', (extract(epoch FROM lock_wait) * 1000)::bigint::text, true);
    BEGIN
        EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', tbl);
    EXCEPTION WHEN lock_not_available THEN
        SELECT string_agg(format('pid %s (%s, its query started %s: %s)', a.pid, a.state, a.query_start,
                                 left(regexp_replace(a.query, '\s+', ' ', 'g'), 60)), '; ' ORDER BY a.pid)
          INTO holders
          FROM pg_stat_activity a
         WHERE a.pid IN (SELECT l.pid FROM pg_locks l
                          WHERE l.granted AND l.pid <> pg_backend_pid() AND l.locktype = 'relation'
                            AND (l.relation = tbl OR l.relation IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = tbl)));
        PERFORM set_config('lock_timeout', caller_lock_timeout, true);
        RAISE EXCEPTION 'convert_sequence_to_flakeid: % was not locked within % (lock_wait): held by %', tbl, lock_wait,
            coalesce(holders, 'sessions that have finished since')
            USING ERRCODE = 'lock_not_available',
                  DETAIL = 'Waiting longer would hold up every reader and writer of the table behind the conversion.',
                  HINT = format('Retry once those transactions end, or wait longer: SELECT convert_sequence_to_flakeid(%L, %L, %L).', tbl, col, '30s');
    END;
    PERFORM set_config('lock_timeout', caller_lock_timeout, true);
    EXECUTE format('SELECT max(%I) FROM %s', col, tbl) INTO top;
    -- The sequence the column owns (serial, bigserial, IDENTITY): a value it handed
    -- out that no row holds yet counts too.
    seq := pg_get_serial_sequence(tbl::text, col);
    IF seq IS NOT NULL THEN
        top := greatest(top, pg_sequence_last_value(seq));
    END IF;
    lowest := @extschema@.flakeid_first_at(clock_timestamp());
    IF top >= lowest THEN
        RAISE EXCEPTION 'convert_sequence_to_flakeid: %.% holds or was given IDs up to %, and flakeid_next() issues IDs from % now (flakeid.layout = %)',
            tbl, quote_ident(col), top, lowest, current_setting('flakeid.layout')
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Every new ID must be above every existing one, or they could repeat.',
                  HINT = 'Keep the sequence, or move the column to a layout whose IDs are above the existing ones now.';
    END IF;
    -- The sequence the column owns goes with its default; a shared sequence it
    -- merely used stays.
    IF ident <> '' THEN
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I DROP IDENTITY', tbl, col);
        seq := NULL;
    END IF;
    EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT @extschema@.flakeid_next()', tbl, col);
    IF seq IS NOT NULL THEN
        -- Other columns whose default still takes the owned sequence (this table's
        -- partitions and children took the new default above): dropping it would
        -- take their defaults with it.
        SELECT string_agg(format('%s.%I', d.adrelid::regclass, a.attname), ', ' ORDER BY d.adrelid::regclass::text)
          INTO others
          FROM pg_depend p
          JOIN pg_attrdef d ON p.classid = 'pg_attrdef'::regclass AND p.objid = d.oid
          JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
         WHERE p.refclassid = 'pg_class'::regclass AND p.refobjid = seq;
        IF others IS NOT NULL THEN
            RAISE EXCEPTION 'convert_sequence_to_flakeid: %.% owns the sequence %, which the defaults of % use too', tbl,
                quote_ident(col), seq, others
                USING ERRCODE = 'dependent_objects_still_exist',
                      DETAIL = 'The conversion drops the sequence the column owns; those defaults would go with it.',
                      HINT = format('Let the other columns keep it: ALTER SEQUENCE %s OWNED BY NONE, then convert (a sequence the column does not own stays); or convert the other columns first.', seq);
        END IF;
        EXECUTE format('DROP SEQUENCE %s', seq);
    END IF;
    RETURN top;
END
$$;
COMMENT ON FUNCTION @extschema@.convert_sequence_to_flakeid(regclass, name, interval) IS
    'moves a bigint column from its sequence or IDENTITY BY DEFAULT to DEFAULT flakeid_next() under an ACCESS EXCLUSIVE lock taken first (waiting at most lock_wait), refused unless every new ID is above every existing one and every referencing column is bigint; returns the highest ID the column holds or its sequence gave';

-- The 128-bit family (docs/postgres.md, "UUIDv7, ULID and TypeID"): one increasing
-- sequence of UUIDs per server, the extract functions, conversions and time bounds.
CREATE  FUNCTION @extschema@."flakeid_uuidv7"() RETURNS uuid /* Uuid */
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'flakeid_uuidv7_wrapper';
CREATE  FUNCTION @extschema@."flakeid_ulid"() RETURNS TEXT /* String */
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'flakeid_ulid_wrapper';
CREATE  FUNCTION @extschema@."flakeid_typeid"(
	"prefix" TEXT /* & str */
) RETURNS TEXT /* String */
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'flakeid_typeid_wrapper';
CREATE  FUNCTION @extschema@."flakeid_uuid_timestamp"(
	"id" uuid /* Uuid */
) RETURNS timestamp with time zone /* Option < TimestampWithTimeZone > */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'flakeid_uuid_timestamp_wrapper';
CREATE  FUNCTION @extschema@."flakeid_uuid_version"(
	"id" uuid /* Uuid */
) RETURNS smallint /* Option < i16 > */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'flakeid_uuid_version_wrapper';
CREATE  FUNCTION @extschema@."flakeid_ulid_timestamp"(
	"ulid" TEXT /* & str */
) RETURNS timestamp with time zone /* TimestampWithTimeZone */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'flakeid_ulid_timestamp_wrapper';
CREATE  FUNCTION @extschema@."flakeid_uuid_to_ulid"(
	"id" uuid /* Uuid */
) RETURNS TEXT /* String */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'flakeid_uuid_to_ulid_wrapper';
CREATE  FUNCTION @extschema@."flakeid_ulid_to_uuid"(
	"ulid" TEXT /* & str */
) RETURNS uuid /* Uuid */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'flakeid_ulid_to_uuid_wrapper';
CREATE  FUNCTION @extschema@."flakeid_typeid_format"(
	"prefix" TEXT, /* & str */
	"id" uuid /* Uuid */
) RETURNS TEXT /* String */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'flakeid_typeid_format_wrapper';
CREATE  FUNCTION @extschema@."flakeid_typeid_parse"(
	"typeid" TEXT /* & str */
) RETURNS TABLE (
	"prefix" TEXT,  /* String */
	"id" uuid  /* Uuid */
)
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'flakeid_typeid_parse_wrapper';
CREATE  FUNCTION @extschema@."flakeid_uuidv7_first_at"(
	"ts" timestamp with time zone /* TimestampWithTimeZone */
) RETURNS uuid /* Uuid */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'flakeid_uuidv7_first_at_wrapper';
CREATE  FUNCTION @extschema@."flakeid_uuidv7_last_at"(
	"ts" timestamp with time zone /* TimestampWithTimeZone */
) RETURNS uuid /* Uuid */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'flakeid_uuidv7_last_at_wrapper';

-- The 128-bit family's batch, explicit time and shifted now; restores of UUID
-- columns (superusers only).
CREATE  FUNCTION @extschema@."flakeid_uuidv7_many_rows"(
	"n" INT /* i32 */
) RETURNS SETOF uuid /* Uuid */
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'flakeid_uuidv7_many_wrapper';
CREATE FUNCTION @extschema@.flakeid_uuidv7_many(n integer) RETURNS SETOF uuid
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT @extschema@.flakeid_uuidv7_many_rows(n)
$$;
COMMENT ON FUNCTION @extschema@.flakeid_uuidv7_many(integer) IS
    'n UUIDv7s of the server''s sequence, increasing; made as they are read (a LIMIT stops it), in FROM too';
CREATE  FUNCTION @extschema@."flakeid_uuidv7_at"(
	"ts" timestamp with time zone /* TimestampWithTimeZone */
) RETURNS uuid /* Uuid */
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'flakeid_uuidv7_at_wrapper';
CREATE  FUNCTION @extschema@."flakeid_uuidv7"(
	"shift" Interval /* pgrx::datum::Interval */
) RETURNS uuid /* Uuid */
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'flakeid_uuidv7_shifted_wrapper';
COMMENT ON FUNCTION @extschema@.flakeid_uuidv7(interval) IS
    'a UUIDv7 of the clock shifted by shift, as PostgreSQL 18''s uuidv7(shift): clock_timestamp() + shift, outside the server''s sequence';
CREATE  FUNCTION @extschema@."flakeid_resume_after"(
	"id" uuid /* pgrx::datum::Uuid */
) RETURNS timestamp with time zone /* TimestampWithTimeZone */
STRICT VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'flakeid_resume_after_uuid_wrapper';
REVOKE ALL ON FUNCTION @extschema@.flakeid_resume_after(uuid) FROM PUBLIC;

-- flakeid_next_many(n) made as its rows are read, in FROM too: an SQL function the
-- planner inlines (so a LIMIT stops it) over the C function's rows
-- (src/generate.rs says why it is STABLE).
CREATE  FUNCTION @extschema@."flakeid_next_many_rows"(
	"n" INT /* i32 */
) RETURNS SETOF bigint /* i64 */
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'flakeid_next_many_wrapper';
CREATE OR REPLACE FUNCTION @extschema@.flakeid_next_many(n integer) RETURNS SETOF bigint
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT @extschema@.flakeid_next_many_rows(n)
$$;
COMMENT ON FUNCTION @extschema@.flakeid_next_many(integer) IS
    'n IDs from the server''s generator, increasing; made as they are read (a LIMIT stops it), in FROM too';
