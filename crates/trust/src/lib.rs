//! Who may connect and what each may do: the cluster's CA and certificates, credentials, roles.

pub mod credential;
pub mod pki;
pub mod reload;
pub mod role;

pub use credential::{
    CREDENTIAL_KIND, Credential, CredentialError, CredentialSpec, Minted, Presented, Use,
    join_token, mint, split_join,
};
pub use pki::{Ca, Issued, PkiError, Usage, fingerprint, write_private};
pub use reload::{CertFiles, ReloadingCert, server_config};
pub use role::{Identity, Role};
