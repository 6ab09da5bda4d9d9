//! `convert_sequence_to_flakeid(table, column)`: the way in for an existing table.
//! It moves a bigint column from a sequence default (serial, bigserial, `DEFAULT
//! nextval(...)`) or an IDENTITY to `DEFAULT flakeid_next()`, in the caller's
//! transaction, after checking that every ID the server issues from now on is above
//! every ID the column holds (docs/postgres.md, "Existing tables"). Named as pgEdge's
//! `snowflake.convert_sequence_to_snowflake`, which users coming from it know.
//!
//! It is DDL and catalog reads, so PL/pgSQL: `LOCK TABLE ... IN SHARE ROW EXCLUSIVE
//! MODE` first (readers go on; writers wait, so no row with a sequence ID can land
//! after the maximum is read), then the check against `flakeid_first_at(now)` (the
//! smallest ID any node of the server's layout can issue from now on), then the
//! catalog-only ALTERs (no table rewrite). sql/flakeid--0.1.0--0.2.0.sql repeats the
//! body; run.py's upgrade section compares the two.

pgrx::extension_sql!(
    r#"
CREATE FUNCTION convert_sequence_to_flakeid(tbl regclass, col name) RETURNS bigint
LANGUAGE plpgsql VOLATILE STRICT SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    typ oid;
    ident "char";
    def text;
    seq regclass;
    top bigint;
    lowest bigint;
BEGIN
    SELECT a.atttypid, a.attidentity, pg_get_expr(d.adbin, d.adrelid) INTO typ, ident, def
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
                  HINT = format('ALTER TABLE %s ALTER COLUMN %I TYPE bigint first (it rewrites the table).', tbl, col);
    END IF;
    IF ident = '' AND (def IS NULL OR def !~ '^nextval\(') THEN
        RAISE EXCEPTION 'convert_sequence_to_flakeid: %.% has no sequence or IDENTITY default (its default: %)', tbl,
            quote_ident(col), coalesce(def, 'none')
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    EXECUTE format('LOCK TABLE %s IN SHARE ROW EXCLUSIVE MODE', tbl);
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
        EXECUTE format('DROP SEQUENCE %s', seq);
    END IF;
    RETURN top;
END
$$;
COMMENT ON FUNCTION convert_sequence_to_flakeid(regclass, name) IS
    'moves a bigint column from its sequence or IDENTITY to DEFAULT flakeid_next(), refused unless every new ID is above every existing one; returns the highest ID the column holds or its sequence gave';
"#,
    name = "convert_sequence_to_flakeid",
    requires = [time_range::flakeid_first_at_server, generate::flakeid_next],
);
