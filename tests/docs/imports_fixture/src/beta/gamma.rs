use crate::{Alpha};

pub struct Gamma;

impl Gamma {
    pub fn of(_a: &Alpha) -> Self {
        Gamma
    }
}
