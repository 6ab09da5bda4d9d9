use crate::{beta::{gamma::Gamma}};

pub struct Alpha(pub Gamma);
