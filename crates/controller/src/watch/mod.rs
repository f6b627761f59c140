//! Stage 1, what reaches a controller: the reflectors' caches of its kinds, the other kinds
//! it watches (secondary watches), what in an object it reacts to, and its own writes (which
//! run nothing again).

pub(crate) mod own_writes;
pub(crate) mod reflector;
pub(crate) mod secondary;
pub(crate) mod trigger;
pub(crate) mod watches;
