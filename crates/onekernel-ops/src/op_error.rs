//! The error of the ops that allocate (the `_into` forms return
//! [`LaunchError`] alone).

use onekernel_runtime::{BufferError, LaunchError};
use std::fmt;

/// What an op that allocates its output or scratch can fail with.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OpError {
    /// A launch failed, or an argument is wrong (`LaunchError::InvalidArgument`
    /// names the op and the argument).
    Launch(LaunchError),
    /// A buffer could not be made, read or written.
    Buffer(BufferError),
}

impl fmt::Display for OpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpError::Launch(e) => e.fmt(f),
            OpError::Buffer(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for OpError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            OpError::Launch(e) => Some(e),
            OpError::Buffer(e) => Some(e),
        }
    }
}

impl From<LaunchError> for OpError {
    fn from(e: LaunchError) -> Self {
        OpError::Launch(e)
    }
}

impl From<BufferError> for OpError {
    fn from(e: BufferError) -> Self {
        OpError::Buffer(e)
    }
}
