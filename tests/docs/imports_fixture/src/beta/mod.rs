pub mod gamma;
