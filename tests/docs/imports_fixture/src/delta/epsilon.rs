use super::super::zeta::*;

pub struct Epsilon(pub Zeta);
