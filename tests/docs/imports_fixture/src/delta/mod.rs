mod epsilon;

pub use epsilon::Epsilon;
