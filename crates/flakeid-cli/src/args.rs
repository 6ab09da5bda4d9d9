//! A small, strict argument reader: options may come in any order, `--opt value` or
//! `--opt=value`; anything unknown is a usage error.

use crate::Failure;
use std::str::FromStr;

pub struct Args {
    items: Vec<String>,
}

impl Args {
    pub fn new(items: Vec<String>) -> Args {
        Args { items }
    }

    /// The first argument that is not an option (the command).
    pub fn next_positional(&mut self) -> Option<String> {
        if self.items.is_empty() {
            return None;
        }
        Some(self.items.remove(0))
    }

    pub fn flag(&mut self, names: &[&str]) -> bool {
        let before = self.items.len();
        self.items.retain(|a| !names.contains(&a.as_str()));
        self.items.len() != before
    }

    pub fn value(&mut self, names: &[&str]) -> Result<Option<String>, Failure> {
        let mut found = None;
        let mut i = 0;
        while i < self.items.len() {
            let a = &self.items[i];
            if let Some((k, v)) = a.split_once('=')
                && names.contains(&k)
            {
                found = Some(v.to_string());
                self.items.remove(i);
                continue;
            }
            if names.contains(&a.as_str()) {
                if i + 1 >= self.items.len() {
                    return Err(Failure::Usage(format!("{a} needs a value")));
                }
                found = Some(self.items.remove(i + 1));
                self.items.remove(i);
                continue;
            }
            i += 1;
        }
        Ok(found)
    }

    pub fn parsed<T: FromStr>(&mut self, names: &[&str]) -> Result<Option<T>, Failure> {
        match self.value(names)? {
            None => Ok(None),
            Some(v) if v.starts_with('+') => Err(Failure::Usage(format!(
                "{} expects a non-negative integer, got {v:?}",
                names[names.len() - 1]
            ))),
            Some(v) => v.parse().map(Some).map_err(|_| {
                Failure::Usage(format!(
                    "{} expects a non-negative integer, got {v:?}",
                    names[names.len() - 1]
                ))
            }),
        }
    }

    /// Remaining positional arguments; an unknown option is an error.
    pub fn rest(self) -> Result<Vec<String>, Failure> {
        if let Some(opt) = self
            .items
            .iter()
            .find(|a| a.starts_with("--") || (a.starts_with('-') && a.len() == 2 && *a != "-"))
        {
            return Err(Failure::Usage(format!("unknown option {opt:?}")));
        }
        Ok(self.items)
    }

    pub fn finish(self) -> Result<(), Failure> {
        let rest = self.rest()?;
        match rest.first() {
            None => Ok(()),
            Some(extra) => Err(Failure::Usage(format!("unexpected argument {extra:?}"))),
        }
    }
}

impl Args {
    /// Uses environment variable `var` for option `name` when the command line does
    /// not give it (e.g. `FLAKEID_NODE` for `--node`).
    pub fn env_fallback(&mut self, name: &str, var: &str) {
        let given = self
            .items
            .iter()
            .any(|a| a == name || a.split_once('=').is_some_and(|(k, _)| k == name));
        if !given && let Ok(value) = std::env::var(var) {
            self.items.push(name.to_string());
            self.items.push(value);
        }
    }
}
