//! `cargo pgrx test`: SQL-level tests inside a PostgreSQL 15 that preloads the
//! library with `flakeid.datacenter = 3`, `flakeid.worker = 7` (see `pg_test`).
//! The cross-language vectors and the concurrency test run in tests/postgres/run.py.

#[pgrx::pg_schema]
mod tests {
    use pgrx::prelude::*;

    fn one<T: IntoDatum + FromDatum>(sql: &str) -> T {
        Spi::get_one::<T>(sql).expect("query failed").expect("NULL result")
    }

    #[pg_test]
    fn next_is_increasing_and_carries_the_configured_node() {
        let ids: Vec<i64> = (0..2000).map(|_| one("SELECT flakeid_next()")).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "not increasing");
        let dc: i32 = one(&format!("SELECT datacenter FROM flakeid_decompose({})", ids[0]));
        let worker: i32 = one(&format!("SELECT worker FROM flakeid_decompose({})", ids[0]));
        let node: i32 = one(&format!("SELECT node FROM flakeid_decompose({})", ids[0]));
        assert_eq!((dc, worker, node), (3, 7, 3 << 5 | 7));
    }

    #[pg_test]
    fn next_many_is_increasing_and_unique() {
        let n: i64 = one("SELECT count(*) FROM (SELECT id, lag(id) OVER (ORDER BY o) AS prev
               FROM flakeid_next_many(50000) WITH ORDINALITY AS t(id, o)) s
              WHERE prev IS NULL OR id > prev");
        assert_eq!(n, 50000);
        let distinct: i64 = one("SELECT count(DISTINCT id) FROM flakeid_next_many(10000) AS id");
        assert_eq!(distinct, 10000);
        let zero: i64 = one("SELECT count(*) FROM flakeid_next_many(0)");
        assert_eq!(zero, 0);
    }

    /// flakeid_stats(): the IDs this backend returned are counted (its own counts
    /// are added when it calls flakeid_stats(), within its transaction).
    #[pg_test]
    fn stats_count_every_id() {
        let stats = || -> Vec<i64> {
            let row: String = one(
                "SELECT concat_ws(' ', ids_issued, tick_waits, tick_wait_us, lead_ms, clock_rollbacks,
                        coalesce(lease_state, '-'), coalesce(lease_remaining_ms, -1)) FROM flakeid_stats()",
            );
            row.split(' ').map(|v| v.parse().unwrap_or(-2)).collect()
        };
        let before = stats();
        let _: i64 = one("SELECT count(*) FROM flakeid_next_many(50000)");
        for _ in 0..7 {
            let _: i64 = one("SELECT flakeid_next()");
        }
        let _: i64 = one("SELECT count(*) FROM (SELECT flakeid_next() FROM generate_series(1, 993)) s");
        let after = stats();
        // (At least: tests in other backends may finish meanwhile. run.py's basic
        // section checks the exact count on a cluster nothing else uses.)
        assert!(after[0] - before[0] >= 51000, "{before:?} {after:?}");
        // (Waits for the next tick: run.py's settings section, with flakeid.max_sequence.)
        assert!(after[1] >= before[1] && after[2] >= before[2], "{before:?} {after:?}");
        // overflow = wait: never ahead of the clock; no rollback; no lease (NULLs).
        assert_eq!(&after[3..], &[0, 0, -2, -1], "{after:?}");
    }

    #[pg_test]
    fn a_default_column_fills_itself() {
        Spi::run("CREATE TABLE t (id bigint PRIMARY KEY DEFAULT flakeid_next(), v int)").unwrap();
        Spi::run("INSERT INTO t (v) SELECT g FROM generate_series(1, 5000) g").unwrap();
        let ordered: i64 = one("SELECT count(*) FROM (SELECT id > lag(id) OVER (ORDER BY v) AS up FROM t) s WHERE up");
        assert_eq!(ordered, 4999);
    }

    #[pg_test]
    fn seed_vector_composes_and_decomposes() {
        // Seed 001: 1505914988849 ms, datacenter 17, worker 25, sequence 0 under snowflake.
        let id: i64 = one("SELECT flakeid_compose(to_timestamp(1505914988.849), 17 << 5 | 25, 0, 'snowflake')");
        assert_eq!(id, 910499571847892992);
        let ms: i64 = one("SELECT (extract(epoch FROM ts) * 1000)::bigint FROM flakeid_decompose(910499571847892992)");
        assert_eq!(ms, 1505914988849);
        let parts: String = one("SELECT format('%s/%s/%s/%s', datacenter, worker, node, sequence)
               FROM flakeid_decompose(910499571847892992, 'snowflake')");
        assert_eq!(parts, "17/25/569/0");
        let record: String = one(
            "SELECT format('%s %s', pg_typeof(flakeid_decompose(910499571847892992)), (flakeid_decompose(910499571847892992)).worker)",
        );
        assert_eq!(record, "flakeid_parts 25");
        let same: bool = one("SELECT flakeid_timestamp(910499571847892992) = to_timestamp(1505914988.849)");
        assert!(same);
    }

    #[pg_test]
    fn first_last_and_range_bound_a_tick() {
        let ok: bool = one(
            "SELECT flakeid_first_at(t) = flakeid_compose(t, 0, 0)
                AND flakeid_last_at(t) = flakeid_compose(t, 1023, 4095)
                AND flakeid_range(tstzrange(t, t + interval '1 ms')) = int8range(flakeid_first_at(t), flakeid_last_at(t), '[]')
               FROM (VALUES (to_timestamp(1700000000.123))) v(t)",
        );
        assert!(ok);
    }

    #[pg_test]
    fn range_holds_exactly_the_ids_whose_time_is_in_it() {
        // Every bound kind, bounds on and between tick starts, with a 10 ms-tick layout too.
        let mismatches: i64 = one("WITH layouts(l) AS (VALUES ('snowflake'), ('sonyflake'), ('baidu')),
                  ids AS (SELECT l, flakeid_compose(to_timestamp(1700000000) + g * interval '250 us', 0, 0, l) AS id
                            FROM layouts, generate_series(-40000, 40000, 7) g),
                  ranges AS (SELECT tstzrange(to_timestamp(1700000000) + a * interval '1 ms',
                                              to_timestamp(1700000000) + b * interval '1 ms', k) AS r
                               FROM (VALUES (-3.5, 2.0), (0, 10), (0.25, 1000), (-1000, -0.5), (5, 5)) x(a, b),
                                    (VALUES ('[]'), ('[)'), ('(]'), ('()')) y(k))
             SELECT count(*) FROM ids, ranges
              WHERE (flakeid_timestamp(id, l) <@ r) <> (id <@ flakeid_range(r, l))");
        assert_eq!(mismatches, 0);
        let inlined: i64 = one(
        "SELECT count(*) FROM generate_series(2124291769758646272 - 5000000, 2124291769758646272 + 5000000, 4099) id,
                (VALUES (tstzrange('2026-11-22', '2026-11-22 00:00:00.0011', '(]')), ('(,)'), ('empty'),
                        (tstzrange('2026-11-21 23:59:59.999', '2026-11-22 00:00:00.001'))) r(r)
          WHERE (id <@ flakeid_range(r)) <> flakeid_in_range(id, r)",
    );
        assert_eq!(inlined, 0);
        let open: bool = one("SELECT flakeid_range(tstzrange(NULL, NULL)) = int8range(0, NULL)
                AND isempty(flakeid_range(tstzrange('1960-01-01', '1961-01-01')))
                AND isempty(flakeid_range('empty'::tstzrange))");
        assert!(open);
    }

    #[pg_test]
    fn encodings_round_trip() {
        let ok: bool = one(
            // Without the encoding only where the text is unambiguous: the encodings of
            // 0 are all zeros, which read as a zero-padded int too (one decode rule with
            // the CLI and the service: such text asks for the encoding).
            "SELECT bool_and(flakeid_decode(flakeid_encode(id, e), e) = id AND (id = 0 OR flakeid_decode(flakeid_encode(id, e)) = id))
               FROM (VALUES (0::bigint), (910499571847892992), (9223372036854775807)) v(id),
                    (VALUES ('base62'), ('base32'), ('hex')) w(e)",
        );
        assert!(ok);
        let text: String = one("SELECT flakeid_encode(910499571847892992, 'hex')");
        assert_eq!(text, "0ca2be895c239000");
    }

    #[pg_test(
        error = "invalid value for argument \"layout\": layout must be one of snowflake, flake, discord, sonyflake, baidu, instagram, js53, got \"nope\""
    )]
    fn unknown_layout_is_an_error() {
        one::<i64>("SELECT flakeid_first_at(now(), 'nope')");
    }

    #[pg_test(error = "invalid value for argument \"node\": node must be in 0..=1023, got 5000")]
    fn out_of_range_node_is_an_error() {
        one::<i64>("SELECT flakeid_compose(now(), 5000, 0, 'snowflake')");
    }

    #[pg_test(error = "invalid value for argument \"id\": a flakeid is never negative, got -1")]
    fn negative_id_is_an_error() {
        one::<String>("SELECT flakeid_encode(-1, 'hex')");
    }

    /// SQLSTATE and message of a statement (PL/pgSQL catches the ERROR in a subtransaction).
    fn failure(sql: &str) -> String {
        Spi::run(
            "CREATE OR REPLACE FUNCTION pg_temp.failure(q text) RETURNS text LANGUAGE plpgsql AS $$
             BEGIN EXECUTE q; RETURN 'no error';
             EXCEPTION WHEN others THEN RETURN SQLSTATE || ': ' || SQLERRM; END $$",
        )
        .unwrap();
        Spi::get_one_with_args::<String>("SELECT pg_temp.failure($1)", &[sql.into()])
            .unwrap()
            .unwrap()
    }

    #[pg_test]
    fn bad_input_has_a_sqlstate_and_names_the_argument() {
        let cases = [
            (
                "SELECT flakeid_decode('abc!', 'base62')",
                "22P02: invalid input for argument \"text\"",
            ),
            (
                "SELECT flakeid_decode('zzzzzzzzzzzzzzzz', 'hex')",
                "22P02: invalid input for argument \"text\"",
            ),
            (
                "SELECT flakeid_encode(1, 'base64')",
                "22023: invalid value for argument \"encoding\"",
            ),
            (
                "SELECT flakeid_timestamp(1, 'snowflak')",
                "22023: invalid value for argument \"layout\"",
            ),
            (
                "SELECT flakeid_compose(now(), 0, 4096, 'snowflake')",
                "22023: invalid value for argument \"sequence\"",
            ),
            (
                "SELECT flakeid_decompose(-5)",
                "22003: invalid value for argument \"id\"",
            ),
            ("SELECT flakeid_first_at('1960-01-01'::timestamptz)", "22008: "),
            ("SELECT flakeid_first_at('infinity'::timestamptz)", "22008: "),
            (
                "SELECT flakeid_next_many(-1)",
                "22023: invalid value for argument \"n\"",
            ),
        ];
        for (sql, want) in cases {
            let got = failure(sql);
            assert!(got.starts_with(want), "{sql}: got {got:?}, want {want:?}...");
        }
    }

    #[pg_test]
    fn volatility_follows_what_a_result_depends_on() {
        // IMMUTABLE only when the arguments alone decide (a layout name, or no layout
        // at all); STABLE when flakeid.layout does; VOLATILE for the generator.
        let wrong: String = one(
            "SELECT coalesce(string_agg(format('%s(%s) is %s', proname, pg_get_function_identity_arguments(oid), provolatile), ', '), '')
               FROM pg_proc
              WHERE proname LIKE 'flakeid\\_%' AND provolatile <> CASE
                    WHEN proname IN ('flakeid_next', 'flakeid_next_many', 'flakeid_next_sealed', 'flakeid_confirm_node', 'flakeid_status', 'flakeid_stats') THEN 'v'
                    WHEN proname IN ('flakeid_encode', 'flakeid_decode') THEN 'i'
                    WHEN 'layout' = ANY (proargnames) THEN 'i'
                    ELSE 's' END",
        );
        assert_eq!(wrong, "");
        let n: i64 = one("SELECT count(*) FROM pg_proc WHERE proname LIKE 'flakeid\\_%'");
        assert_eq!(n, 27);
    }

    #[pg_test]
    fn the_high_water_mark_is_ahead_of_every_id() {
        Spi::run("CREATE TEMP TABLE ids AS SELECT flakeid_next_many(20000) AS id").unwrap();
        let ahead: bool = one(
            "SELECT s.high_water_mark >= (SELECT flakeid_timestamp(max(id)) FROM ids) AND s.state = 'ready'
               FROM flakeid_status() s",
        );
        assert!(ahead);
    }

    #[pg_test]
    fn a_read_only_transaction_is_refused_as_nextval_is() {
        Spi::run(
            "CREATE FUNCTION pg_temp.read_only(q text) RETURNS text LANGUAGE plpgsql AS $$
             BEGIN SET LOCAL transaction_read_only = on; EXECUTE q; RETURN 'no error';
             EXCEPTION WHEN others THEN RETURN SQLSTATE || ': ' || SQLERRM; END $$",
        )
        .unwrap();
        for (sql, want) in [
            (
                "SELECT flakeid_next()",
                "25006: cannot execute flakeid_next() in a read-only transaction",
            ),
            (
                "SELECT count(*) FROM flakeid_next_many(3)",
                "25006: cannot execute flakeid_next_many() in a read-only transaction",
            ),
            (
                "SELECT nextval('ro_seq')",
                "25006: cannot execute nextval() in a read-only transaction",
            ),
        ] {
            Spi::run("CREATE SEQUENCE IF NOT EXISTS ro_seq").unwrap();
            let got = Spi::get_one_with_args::<String>("SELECT pg_temp.read_only($1)", &[sql.into()])
                .unwrap()
                .unwrap();
            assert_eq!(got, want, "{sql}");
        }
    }

    #[pg_test]
    fn a_look_alike_type_first_on_search_path_changes_nothing() {
        Spi::run("CREATE SCHEMA lookalike").unwrap();
        Spi::run("CREATE TYPE lookalike.flakeid_parts AS (ts text, worker text)").unwrap();
        Spi::run("SET LOCAL search_path = lookalike, public").unwrap();
        let parts: String = one(
            "SELECT format('%s %s', pg_typeof(flakeid_decompose(910499571847892992)), (flakeid_decompose(910499571847892992, 'snowflake')).worker)",
        );
        assert_eq!(parts, "public.flakeid_parts 25");
    }

    #[pg_test]
    fn confirming_another_node_id_is_refused() {
        assert_eq!(
            failure("SELECT flakeid_confirm_node(5)"),
            "22023: flakeid_confirm_node(): this server's node id is 103, not 5"
        );
        // On a server already issuing, confirming changes nothing a backend resumes
        // after: its durable mark is reserved ahead of the clock, and a backend built
        // after the confirmation must not start there (its clock would be "behind").
        one::<i64>("SELECT count(*) FROM flakeid_next_many(10000)");
        let resumes_after = crate::shmem::STARTUP.share().resume_after_ms;
        let confirmed: String = one("SELECT flakeid_confirm_node(103)");
        assert!(
            confirmed.starts_with("node id 103 may issue IDs on timeline 1"),
            "{confirmed}"
        );
        assert_eq!(crate::shmem::STARTUP.share().resume_after_ms, resumes_after);
    }

    // NIST's FF1 sample key for AES-128, as in tests/vectors/seal.json, whose first
    // snowflake group (no tweak) gives 910499571847892992 → 575246358720680725.
    const KEY: &str = "'\\x2b7e151628aed2a6abf7158809cf4f3c'::bytea";

    #[pg_test]
    fn seal_and_unseal_follow_the_vectors_and_the_server_layout() {
        let sealed: i64 = one(&format!("SELECT flakeid_seal(910499571847892992, {KEY})"));
        assert_eq!(sealed, 575246358720680725);
        let named: i64 = one(&format!(
            "SELECT flakeid_seal(910499571847892992, {KEY}, '', 'snowflake')"
        ));
        assert_eq!(named, sealed);
        let back: i64 = one(&format!("SELECT flakeid_unseal(575246358720680725, {KEY})"));
        assert_eq!(back, 910499571847892992);
        // A tweak: another permutation, and its inverse.
        let tweaked: i64 = one(&format!("SELECT flakeid_seal(910499571847892992, {KEY}, 'orders')"));
        assert_ne!(tweaked, sealed);
        let back: i64 = one(&format!("SELECT flakeid_unseal({tweaked}, {KEY}, 'orders'::bytea)"));
        assert_eq!(back, 910499571847892992);
        // Every row of a table, and back (one cached sealer for the statement).
        let same: i64 = one(&format!(
            "SELECT count(*) FROM (SELECT id, flakeid_unseal(flakeid_seal(id, {KEY}), {KEY}) AS again
               FROM flakeid_next_many(5000) AS id) s WHERE id = again"
        ));
        assert_eq!(same, 5000);
        // A 64-bit layout's sealed IDs use the whole bigint, negatives included.
        let negative: i64 = one(&format!(
            "SELECT count(*) FROM generate_series(1, 200) g WHERE flakeid_seal(g, {KEY}, '', 'discord') < 0"
        ));
        assert!((40..=160).contains(&negative), "{negative}");
        let round: i64 = one(&format!(
            "SELECT count(*) FROM generate_series(1, 200) g
              WHERE flakeid_unseal(flakeid_seal(g, {KEY}, '', 'discord'), {KEY}, '', 'discord') = g"
        ));
        assert_eq!(round, 200);
    }

    #[pg_test]
    fn seal_errors_name_the_argument_and_never_the_key() {
        let cases = [
            (
                "SELECT flakeid_seal(1, '\\x00112233445566778899aabbccddee'::bytea)".to_string(),
                "22023: invalid value for argument \"key\": key must be 16, 24 or 32 bytes",
            ),
            (
                format!("SELECT flakeid_seal(-1, {KEY})"),
                "22023: invalid value for argument \"id\": id must be in 0..=9223372036854775807, got -1",
            ),
            (
                format!("SELECT flakeid_unseal(-5, {KEY}, '', 'snowflake')"),
                "22023: invalid value for argument \"id\"",
            ),
            (
                format!("SELECT flakeid_seal(1, {KEY}, '', 'nope')"),
                "22023: invalid value for argument \"layout\"",
            ),
        ];
        for (sql, want) in cases {
            let got = failure(&sql);
            assert!(got.starts_with(want), "{sql}: got {got:?}, want {want:?}...");
            assert!(!got.contains("2b7e15") && !got.contains("00112233"), "{got}");
        }
    }

    #[pg_test]
    fn next_sealed_needs_the_setting_and_seals_with_it() {
        assert_eq!(
            failure("SELECT flakeid_next_sealed()"),
            "55000: flakeid_next_sealed() needs a key: flakeid.seal_key is not set"
        );
        Spi::run("SET flakeid.seal_key = 'abcdef'").unwrap();
        let got = failure("SELECT flakeid_next_sealed()");
        assert!(
            got.starts_with(
                "22023: invalid value for parameter \"flakeid.seal_key\": key must be 32, 48 or 64 hex digits"
            ),
            "{got}"
        );
        assert!(!got.contains("abcdef"), "{got}");
        Spi::run("SET flakeid.seal_key = '2b7e151628aed2a6 abf7158809cf4f3c'").unwrap();
        let sealed: Vec<i64> = (0..50).map(|_| one("SELECT flakeid_next_sealed()")).collect();
        let plain: Vec<i64> = sealed
            .iter()
            .map(|s| one(&format!("SELECT flakeid_unseal({s}, {KEY})")))
            .collect();
        assert!(plain.windows(2).all(|w| w[0] < w[1]), "unsealed: the generator's order");
        let node: i32 = one(&format!("SELECT node FROM flakeid_decompose({})", plain[0]));
        assert_eq!(node, 3 << 5 | 7);
        assert!(sealed.windows(2).any(|w| w[0] > w[1]), "sealed: unordered");
        // Another key: another sealer (the cache follows the setting).
        Spi::run("SET flakeid.seal_key = '000102030405060708090a0b0c0d0e0f'").unwrap();
        let other: i64 = one("SELECT flakeid_next_sealed()");
        let plain: i64 = one(&format!(
            "SELECT flakeid_unseal({other}, '\\x000102030405060708090a0b0c0d0e0f'::bytea)"
        ));
        assert_eq!((plain >> 12) & 0x3ff, 3 << 5 | 7);
        // Hidden from SHOW ALL and pg_settings' listing for everyone.
        let listed: i64 = one("SELECT count(*) FROM pg_show_all_settings() WHERE name = 'flakeid.seal_key'");
        assert_eq!(listed, 0);
    }

    #[pg_test]
    fn only_superusers_set_or_read_the_seal_key() {
        Spi::run("CREATE ROLE flakeid_plain_user").unwrap();
        Spi::run("SET flakeid.seal_key = '000102030405060708090a0b0c0d0e0f'").unwrap();
        Spi::run("SET LOCAL ROLE flakeid_plain_user").unwrap();
        let read = failure("SELECT current_setting('flakeid.seal_key')");
        assert!(read.starts_with("42501: "), "{read}");
        assert!(!read.contains("000102"), "{read}");
        let set = failure("SET flakeid.seal_key = '00112233445566778899aabbccddeeff'");
        assert!(set.starts_with("42501: "), "{set}");
        // It may still issue sealed IDs with the key it cannot read.
        let sealed: i64 = one("SELECT flakeid_next_sealed()");
        assert!(sealed >= 0);
    }

    /// The options of the core's table that no GUC holds, and why (docs/postgres.md,
    /// Settings): every other option is `flakeid.<name>`.
    const NOT_GUC_OPTIONS: [(&str, &str); 2] = [
        (
            "clock",
            "a manual clock for tests: a handle, not a value; the server reads the OS clock",
        ),
        (
            "state",
            "a file for one process's high-water mark: the server keeps its own, WAL-logged with the database",
        ),
    ];

    /// Every option of the core's table is a GUC `flakeid.<name>`, or listed with the
    /// reason it is not (NOT_GUC_OPTIONS, and docs/postgres.md's settings table).
    #[pg_test]
    fn every_core_option_has_its_guc_or_a_reason() {
        let docs = include_str!("../../../docs/postgres.md");
        for o in flakeid_core::GENERATOR_OPTIONS {
            let guc = crate::settings::is_guc(o.name);
            let why = NOT_GUC_OPTIONS.iter().find(|(n, _)| *n == o.name);
            assert!(
                guc != why.is_some(),
                "{}: a GUC, or a reason why not (exactly one)",
                o.name
            );
            let n: i64 = one(&format!(
                "SELECT count(*) FROM pg_settings WHERE name = 'flakeid.{}'",
                o.name
            ));
            assert_eq!(n, i64::from(guc), "flakeid.{}", o.name);
            let row = if guc {
                format!("`flakeid.{}`", o.name)
            } else {
                format!("`{}`", o.name)
            };
            assert!(docs.contains(&row), "docs/postgres.md does not list {row}");
        }
    }

    /// tests/vectors/options.json through the GUCs' path (settings::set_options, what
    /// builder() and the check hooks call): each option a GUC holds gives the same
    /// ErrorKind and field as in every binding. The JSON is read by PostgreSQL itself
    /// (jsonb), so the extension needs no JSON crate; cases with options no GUC holds
    /// (NOT_GUC_OPTIONS: `state`'s cases) are skipped, and each GUC name is checked to exist.
    #[pg_test]
    fn option_vectors_through_the_gucs() {
        let json = include_str!("../../../tests/vectors/options.json");
        assert!(!json.contains("$v$"));
        for o in flakeid_core::GENERATOR_OPTIONS
            .iter()
            .filter(|o| crate::settings::is_guc(o.name))
        {
            let name = o.name;
            let n: i64 = one(&format!(
                "SELECT count(*) FROM pg_settings WHERE name = 'flakeid.{name}'"
            ));
            assert_eq!(n, 1, "flakeid.{name}");
        }
        let table: String = one(&format!(
            r#"SELECT string_agg(concat_ws(E'\t', c->>'layout', coalesce(c->>'error', ''),
                   coalesce(c->>'field', ''),
                   (SELECT coalesce(string_agg(key || '=' || (value #>> '{{}}'), E'\x1f'), '')
                      FROM jsonb_each(c->'options'))), E'\n' ORDER BY ord)
                 FROM jsonb_array_elements($v${json}$v$::jsonb -> 'cases') WITH ORDINALITY AS t(c, ord)"#
        ));
        let (mut ran, mut skipped) = (0, 0);
        for line in table.lines() {
            let mut f = line.split('\t');
            let (layout, error, field, opts) = (
                f.next().unwrap_or(""),
                f.next().unwrap_or(""),
                f.next().unwrap_or(""),
                f.next().unwrap_or(""),
            );
            let mut values = vec![("layout", layout.to_string())];
            let mut usable = true;
            for kv in opts.split('\x1f').filter(|kv| !kv.is_empty()) {
                let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                match flakeid_core::generator_option(k).filter(|o| crate::settings::is_guc(o.name)) {
                    Some(o) => values.push((o.name, v.to_string())),
                    None => {
                        // Only an option no GUC holds, for its stated reason.
                        assert!(
                            NOT_GUC_OPTIONS.iter().any(|(n, _)| *n == k),
                            "{line}: {k} is neither a GUC nor in NOT_GUC_OPTIONS"
                        );
                        usable = false;
                    }
                }
            }
            if !usable {
                skipped += 1;
                continue;
            }
            ran += 1;
            let got = crate::settings::set_options(values).and_then(|b| b.build());
            match (got, error) {
                (Ok(_), "") => {}
                (Err(e), kind) if !kind.is_empty() => {
                    assert_eq!(e.kind().name(), kind, "{line}: {e}");
                    assert_eq!(e.details().field, Some(field), "{line}: {e}");
                }
                (Ok(_), kind) => panic!("{line}: built, expected {kind} ({field})"),
                (Err(e), _) => panic!("{line}: {e}"),
            }
        }
        // Every case but those of `state` (a file, NOT_GUC_OPTIONS): since
        // flakeid.max_sequence, each other option the vectors use is a GUC.
        let state_cases = json.matches("\"state\":").count();
        assert!(
            ran >= 20 && skipped == state_cases,
            "ran {ran}, skipped {skipped}, state cases {state_cases}"
        );
    }
}
