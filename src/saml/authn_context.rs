//! SAML authentication context classes (SAML Authn Context, REFEDS MFA) and our levels:
//! what a `RequestedAuthnContext` asks of the sign-in (SAML Core §3.3.2.2.1), and which class
//! an assertion then reports.

use crate::factors::Level;

pub const PASSWORD_PROTECTED: &str = "urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport";
pub const PASSWORD: &str = "urn:oasis:names:tc:SAML:2.0:ac:classes:Password";
pub const UNSPECIFIED: &str = "urn:oasis:names:tc:SAML:2.0:ac:classes:unspecified";
/// The REFEDS MFA profile: what SPs that want a second factor ask for.
pub const REFEDS_MFA: &str = "https://refeds.org/profile/mfa";
const MOBILE_TWO_FACTOR: &str = "urn:oasis:names:tc:SAML:2.0:ac:classes:MobileTwoFactorContract";
const TIME_SYNC_TOKEN: &str = "urn:oasis:names:tc:SAML:2.0:ac:classes:TimeSyncToken";

/// The level a class means, for the classes we can give.
pub fn level_of(class: &str) -> Option<Level> {
    match class {
        PASSWORD_PROTECTED | PASSWORD | UNSPECIFIED => Some(Level::Password),
        REFEDS_MFA | MOBILE_TWO_FACTOR | TIME_SYNC_TOKEN => Some(Level::Mfa),
        _ => None,
    }
}

/// The class we report for a sign-in of `level` when nothing in particular was asked.
pub fn class_of(level: Level) -> &'static str {
    match level {
        Level::Password => PASSWORD_PROTECTED,
        Level::Mfa | Level::Passkey => REFEDS_MFA,
    }
}

/// What the request asks: `Ok(None)`, nothing we must reach; `Ok(Some(level))`, a sign-in of
/// at least `level`; `Err(())`, nothing we can give (the SP is then told NoAuthnContext).
pub fn required(classes: &[String], comparison: Option<&str>) -> Result<Option<Level>, ()> {
    if classes.is_empty() {
        return Ok(None);
    }
    let known: Vec<Level> = classes.iter().filter_map(|c| level_of(c)).collect();
    match comparison.unwrap_or("exact") {
        // As strong as possible, but no stronger than one of them: any sign-in we give is
        // reported as the strongest class it meets.
        "maximum" => Ok(None),
        // Stronger than one of them.
        "better" => match known.iter().min() {
            Some(Level::Password) => Ok(Some(Level::Mfa)),
            _ => Err(()),
        },
        // One of them (exact), or at least one of them (minimum): the least we know.
        _ => known.iter().min().map(|l| Some(*l)).ok_or(()),
    }
}

/// The class to report for a sign-in of `level`: the first class asked for that it meets
/// (SAML Core: the context must be one of those requested), else its own.
pub fn reported(classes: &[String], level: Level) -> String {
    classes.iter().find(|c| level_of(c).is_some_and(|l| l <= level)).cloned().unwrap_or_else(|| class_of(level).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(c: &[&str]) -> Vec<String> {
        c.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn requests_map_to_levels_by_their_comparison() {
        assert_eq!(required(&[], None), Ok(None));
        assert_eq!(required(&v(&[PASSWORD_PROTECTED]), None), Ok(Some(Level::Password)));
        assert_eq!(required(&v(&[REFEDS_MFA, PASSWORD]), Some("minimum")), Ok(Some(Level::Password)));
        assert_eq!(required(&v(&[REFEDS_MFA]), Some("exact")), Ok(Some(Level::Mfa)));
        assert_eq!(required(&v(&[PASSWORD]), Some("better")), Ok(Some(Level::Mfa)));
        assert_eq!(required(&v(&[REFEDS_MFA]), Some("better")), Err(()));
        assert_eq!(required(&v(&["urn:example:smartcard"]), None), Err(()));
        assert_eq!(required(&v(&["urn:example:smartcard"]), Some("maximum")), Ok(None));
    }

    #[test]
    fn the_reported_class_is_one_asked_for_that_the_sign_in_meets() {
        assert_eq!(reported(&v(&[REFEDS_MFA, PASSWORD]), Level::Password), PASSWORD);
        assert_eq!(reported(&v(&[REFEDS_MFA]), Level::Passkey), REFEDS_MFA);
        assert_eq!(reported(&[], Level::Mfa), REFEDS_MFA);
        assert_eq!(reported(&[], Level::Password), PASSWORD_PROTECTED);
    }
}
