//! `cargo pgrx test` (in a PostgreSQL 15 that preloads the library): the option
//! vectors through the GUCs' path. tests/postgres/run.py checks every SQL function.

#[pgrx::pg_schema]
mod tests {
    use pgrx::prelude::*;

    /// tests/vectors/options.json through the GUCs' path (settings::set_options, what
    /// builder() and the check hooks call): each option a GUC holds gives the same
    /// ErrorKind and field as in every binding. The JSON is read by PostgreSQL itself
    /// (jsonb), so the extension needs no JSON crate. Cases with an option no GUC holds
    /// (`state`'s: run.py's functions section says which and why) are skipped.
    #[pg_test]
    fn option_vectors_through_the_gucs() {
        let json = include_str!("../../../tests/vectors/options.json");
        assert!(!json.contains("$v$"));
        let table: String = Spi::get_one::<String>(&format!(
            r#"SELECT string_agg(concat_ws(E'\t', c->>'layout', coalesce(c->>'error', ''),
                   coalesce(c->>'field', ''),
                   (SELECT coalesce(string_agg(key || '=' || (value #>> '{{}}'), E'\x1f'), '')
                      FROM jsonb_each(c->'options'))), E'\n' ORDER BY ord)
                 FROM jsonb_array_elements($v${json}$v$::jsonb -> 'cases') WITH ORDINALITY AS t(c, ord)"#
        ))
        .expect("query failed")
        .expect("NULL result");
        let (mut ran, mut skipped) = (0, 0);
        for line in table.lines() {
            let fields: Vec<&str> = line.splitn(4, '\t').collect();
            let [layout, error, field, opts] = fields[..] else {
                panic!("{line}: not four fields")
            };
            // None: the case sets an option no GUC holds.
            let options: Option<Vec<_>> = opts
                .split('\x1f')
                .filter(|kv| !kv.is_empty())
                .map(|kv| kv.split_once('=').unwrap_or((kv, "")))
                .map(|(k, v)| flakeid_core::generator_option(k).map(|o| (o.name, v.to_string())))
                .collect();
            let Some(mut values) = options.filter(|o| o.iter().all(|(name, _)| crate::settings::is_guc(name))) else {
                skipped += 1;
                continue;
            };
            values.insert(0, ("layout", layout.to_string()));
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
        // Every case but those of `state` (a file, not a setting): since
        // flakeid.max_sequence, each other option the vectors use is a GUC.
        let state_cases = json.matches("\"state\":").count();
        assert!(
            ran >= 20 && skipped == state_cases,
            "ran {ran}, skipped {skipped}, state cases {state_cases}"
        );
    }
}
