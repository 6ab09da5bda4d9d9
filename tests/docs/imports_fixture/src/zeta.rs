use crate::delta;

pub struct Zeta;

pub fn epsilon(z: Zeta) -> delta::Epsilon {
    delta::Epsilon(z)
}
