mod alpha;
mod beta;
mod delta;
mod zeta;

pub use alpha::Alpha;
