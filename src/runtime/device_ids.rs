//! Device ids: user ids (what a process passes to `aclrtSetDevice`), logical ids and physical
//! ids, and the conversions between them (`aclrtGet*DevIdBy*DevId`, IPC).
//!
//! On this machine a logical id is a physical id (`0..ASCENDLESS_DEVICE_COUNT`, the same
//! device in every process), and a user id is the device's position among those
//! `ASCEND_RT_VISIBLE_DEVICES` lets the process see (`config::visible`). The runtime keeps
//! user ids; an id that crosses processes is converted to the physical id on the way out and
//! back on the way in, since two processes may see the same device under different user ids.
//!
//! The vendor documents that `aclrtGetLogicDevIdByPhyDevId` answers a user id and that
//! `aclrtGetPhyDevIdByLogicDevId` takes one (their "logical" is a misnomer kept for
//! compatibility; callers pass the id `aclrtGetDevice` gave them); the FFI layer maps them
//! onto [`user_of_physical`] and [`physical_of_user`] accordingly.

use crate::config::Settings;
use crate::error::rt_codes::{ACL_ERROR_RT_INVALID_DEVICEID, ACL_ERROR_RT_PARAM_INVALID};
use crate::error::{AclError, AclResult};

/// A negative id is a bad parameter (107000), as the vendor checks it before the lookup.
fn non_negative(id: i32, what: &str) -> AclResult<u32> {
    u32::try_from(id).map_err(|_| {
        AclError::new(ACL_ERROR_RT_PARAM_INVALID, format!("{what} {id} is negative; device ids start at 0"))
    })
}

fn visible_note(s: &Settings) -> String {
    match (&s.visible.setting, s.visible.fault_text()) {
        (_, Some(why)) => format!(" ({why})"),
        (Some(v), None) => format!(" (ASCEND_RT_VISIBLE_DEVICES={v:?})"),
        (None, None) => String::new(),
    }
}

/// The logical id of the device this process calls `user`.
pub fn logical_of_user(user: i32, s: &Settings) -> AclResult<i32> {
    let u = non_negative(user, "user device id")?;
    s.visible.logical_of_user(u).map(|l| l as i32).ok_or_else(|| {
        AclError::new(
            ACL_ERROR_RT_INVALID_DEVICEID,
            format!(
                "user device id {user} is invalid: this process sees user ids {}{}",
                s.visible.user_range(),
                visible_note(s)
            ),
        )
    })
}

/// The user id under which this process sees logical device `logical`.
pub fn user_of_logical(logical: i32, s: &Settings) -> AclResult<i32> {
    let l = non_negative(logical, "logical device id")?;
    let machine = s.visible.machine();
    if l >= machine {
        return Err(AclError::new(
            ACL_ERROR_RT_INVALID_DEVICEID,
            format!("logical device id {logical} is invalid: this machine has devices 0..{}", machine - 1),
        ));
    }
    s.visible.user_of_logical(l).map(|u| u as i32).ok_or_else(|| {
        AclError::new(
            ACL_ERROR_RT_INVALID_DEVICEID,
            format!("device {logical} is not visible to this process{}", visible_note(s)),
        )
    })
}

/// The logical id of physical device `physical` (the same number on this machine).
pub fn logical_of_physical(physical: i32, s: &Settings) -> AclResult<i32> {
    let p = non_negative(physical, "physical device id")?;
    let machine = s.visible.machine();
    if p >= machine {
        return Err(AclError::new(
            ACL_ERROR_RT_INVALID_DEVICEID,
            format!("physical device id {physical} is invalid: this machine has devices 0..{}", machine - 1),
        ));
    }
    Ok(physical)
}

/// The physical id of the device this process calls `user`.
pub fn physical_of_user(user: i32, s: &Settings) -> AclResult<i32> {
    // Physical and logical ids coincide on this machine (see the module doc).
    logical_of_user(user, s)
}

/// The user id under which this process sees physical device `physical`.
pub fn user_of_physical(physical: i32, s: &Settings) -> AclResult<i32> {
    user_of_logical(logical_of_physical(physical, s)?, s)
}

/// The id that names user device `user` in every process (for what crosses processes).
pub fn shared_id(user: i32, s: &Settings) -> AclResult<i32> {
    physical_of_user(user, s)
}

/// The user id of a device another process named by its shared id; `None` when this process
/// does not see that device.
pub fn from_shared_id(physical: i32, s: &Settings) -> Option<i32> {
    user_of_physical(physical, s).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine(count: &str, visible: Option<&str>) -> Settings {
        let (count, visible) = (count.to_owned(), visible.map(str::to_owned));
        crate::config::from_env(move |v| match v {
            "ASCENDLESS_DEVICE_COUNT" => Some(count.clone()),
            "ASCEND_RT_VISIBLE_DEVICES" => visible.clone(),
            _ => None,
        })
    }

    #[test]
    fn without_the_variable_all_three_ids_agree() {
        let s = machine("8", None);
        for id in 0..8 {
            assert_eq!(logical_of_user(id, &s).unwrap(), id);
            assert_eq!(user_of_logical(id, &s).unwrap(), id);
            assert_eq!(physical_of_user(id, &s).unwrap(), id);
            assert_eq!(user_of_physical(id, &s).unwrap(), id);
        }
        assert_eq!(logical_of_user(8, &s).unwrap_err().code, ACL_ERROR_RT_INVALID_DEVICEID);
        assert_eq!(logical_of_user(-1, &s).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
    }

    #[test]
    fn the_visible_list_renumbers_user_ids_only() {
        let s = machine("8", Some("2,5,7"));
        assert_eq!(logical_of_user(1, &s).unwrap(), 5);
        assert_eq!(physical_of_user(2, &s).unwrap(), 7);
        for user in 0..3 {
            assert_eq!(user_of_logical(logical_of_user(user, &s).unwrap(), &s).unwrap(), user);
            assert_eq!(user_of_physical(physical_of_user(user, &s).unwrap(), &s).unwrap(), user);
        }
        for physical in [2, 5, 7] {
            assert_eq!(physical_of_user(user_of_physical(physical, &s).unwrap(), &s).unwrap(), physical);
            assert_eq!(logical_of_physical(physical, &s).unwrap(), physical);
        }
        let hidden = user_of_physical(3, &s).unwrap_err();
        assert_eq!(hidden.code, ACL_ERROR_RT_INVALID_DEVICEID);
        assert!(
            hidden.message.contains("not visible") && hidden.message.contains("2,5,7"),
            "{}",
            hidden.message
        );
        assert_eq!(logical_of_user(3, &s).unwrap_err().code, ACL_ERROR_RT_INVALID_DEVICEID);
        assert_eq!(user_of_logical(8, &s).unwrap_err().code, ACL_ERROR_RT_INVALID_DEVICEID);
        assert_eq!(user_of_physical(-2, &s).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(
            (shared_id(0, &s).unwrap(), from_shared_id(2, &s), from_shared_id(4, &s)),
            (2, Some(0), None)
        );
    }

    #[test]
    fn a_faulty_list_leaves_no_id() {
        let s = machine("8", Some("3,1"));
        let e = logical_of_user(0, &s).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_INVALID_DEVICEID);
        assert!(e.message.contains("ascending"), "{}", e.message);
        assert_eq!(user_of_physical(3, &s).unwrap_err().code, ACL_ERROR_RT_INVALID_DEVICEID);
    }
}
