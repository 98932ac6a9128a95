//! `ASCEND_RT_VISIBLE_DEVICES`: which of the machine's devices a process sees, and under which
//! numbers.
//!
//! # Three kinds of device id
//! - A **physical** id names a device of the machine. Here the machine is
//!   `ASCENDLESS_DEVICE_COUNT` devices numbered `0..count`, and a process never runs in a
//!   container that renumbers them, so the **logical** id (the driver's number for the device)
//!   is the physical id: `logical = physical`. Both mean the same device in every process, so
//!   they are what crosses processes (IPC exports carry the physical id).
//! - A **user** id is what the process passes to `aclrtSetDevice` and gets from
//!   `aclrtGetDevice`: the position of the device in the visible list. Without the variable
//!   every device is visible and `user = logical`.
//!
//! # The variable's syntax (the vendor's parser, rule for rule)
//! A comma-separated list of logical ids in ascending order, e.g. `1,2,3`: the process sees
//! those devices as user ids 0, 1, 2. Reading stops, keeping what came before, at the first
//! character that is neither a digit nor a comma (`1, 2,3` gives `1`), at an empty entry
//! (`1,,2` gives `1`), and at an id the machine does not have (`1,3,8` with 8 devices gives
//! `1,3`); at most as many ids as the machine has devices are read. A list that is not ascending
//! (`3,1`) or repeats an id (`1,1`), or that yields no id at all (`x`, `8`, an empty value), is
//! a fault: the process then sees no device (`aclrtGetDeviceCount` fails with 207004 and every
//! device id is invalid), as with the vendor.

/// Why the variable leaves the process without devices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// No valid id before the first character the parser stops at.
    NoValidId,
    /// An id smaller than the one before it.
    NotAscending,
    /// An id given twice.
    Duplicated,
}

/// The devices a process sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VisibleDevices {
    /// The variable's value, if it was set (for messages).
    pub setting: Option<String>,
    /// The logical ids of the visible devices; a device's user id is its position here.
    logical: Vec<u32>,
    /// Set when the value leaves the process without devices.
    pub fault: Option<Fault>,
    /// Devices of the machine.
    machine: u32,
}

impl VisibleDevices {
    /// Every device of a machine of `machine` devices, numbered alike (the variable unset).
    pub fn all(machine: u32) -> VisibleDevices {
        VisibleDevices { setting: None, logical: (0..machine).collect(), fault: None, machine }
    }

    /// The devices `value` (the variable's value, `None` when unset) selects among `machine`.
    pub fn parse(value: Option<&str>, machine: u32) -> VisibleDevices {
        let Some(text) = value else { return VisibleDevices::all(machine) };
        let mut logical: Vec<u32> = Vec::new();
        let mut fault = None;
        for token in tokens(text) {
            // Ids beyond u32 or the machine end the list, keeping what came before.
            let Some(id) = token.parse::<u32>().ok().filter(|&id| id < machine) else { break };
            if let Some(&last) = logical.last() {
                if id < last {
                    fault = Some(Fault::NotAscending);
                    break;
                }
                if logical.contains(&id) {
                    fault = Some(Fault::Duplicated);
                    break;
                }
            }
            logical.push(id);
            if logical.len() >= machine as usize {
                break;
            }
        }
        if fault.is_none() && logical.is_empty() {
            fault = Some(Fault::NoValidId);
        }
        if fault.is_some() {
            logical.clear();
        }
        VisibleDevices { setting: Some(text.to_owned()), logical, fault, machine }
    }

    /// Devices the process sees (user ids `0..count`).
    pub fn count(&self) -> u32 {
        self.logical.len() as u32
    }

    /// Devices of the machine (logical and physical ids `0..machine`).
    pub fn machine(&self) -> u32 {
        self.machine
    }

    /// The logical id of user id `user`, if the process sees such a device.
    pub fn logical_of_user(&self, user: u32) -> Option<u32> {
        self.logical.get(user as usize).copied()
    }

    /// The user id of logical id `logical`, if the process sees that device.
    pub fn user_of_logical(&self, logical: u32) -> Option<u32> {
        self.logical.iter().position(|&l| l == logical).map(|p| p as u32)
    }

    /// What is wrong with the variable, for messages; `None` when nothing is.
    pub fn fault_text(&self) -> Option<String> {
        let why = match self.fault.as_ref()? {
            Fault::NoValidId => format!("names no device of this machine (ids 0..{})", self.machine),
            Fault::NotAscending => "must list device ids in ascending order".to_owned(),
            Fault::Duplicated => "must not list a device id twice".to_owned(),
        };
        Some(format!(
            "ASCEND_RT_VISIBLE_DEVICES={:?} {why}, so this process sees no device",
            self.setting.as_deref().unwrap_or_default()
        ))
    }

    /// The user ids, for messages: "0..3", or "none".
    pub fn user_range(&self) -> String {
        match self.count() {
            0 => "none".to_owned(),
            n => format!("0..{}", n - 1),
        }
    }
}

/// The digit runs of `text`, up to the first character that is neither a digit nor a single
/// comma between two of them (the vendor's tokenizer: a value not starting with a digit has
/// none).
fn tokens(text: &str) -> Vec<&str> {
    if !text.starts_with(|c: char| c.is_ascii_digit()) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut start = None;
    let mut commas = 0;
    for (i, c) in text.char_indices() {
        if c.is_ascii_digit() {
            start.get_or_insert(i);
            commas = 0;
            continue;
        }
        if let Some(s) = start.take() {
            out.push(&text[s..i]);
        }
        commas += 1;
        if c != ',' || commas > 1 {
            return out;
        }
    }
    if let Some(s) = start {
        out.push(&text[s..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &VisibleDevices) -> Vec<u32> {
        (0..v.count()).map(|u| v.logical_of_user(u).unwrap()).collect()
    }

    #[test]
    fn unset_shows_every_device_under_its_own_number() {
        let v = VisibleDevices::parse(None, 8);
        assert_eq!(ids(&v), (0..8).collect::<Vec<_>>());
        assert_eq!((v.fault.clone(), v.user_of_logical(5)), (None, Some(5)));
    }

    #[test]
    fn the_list_selects_and_renumbers() {
        let v = VisibleDevices::parse(Some("1,2,3"), 8);
        assert_eq!(ids(&v), [1, 2, 3]);
        assert_eq!(v.user_of_logical(2), Some(1));
        assert_eq!(v.user_of_logical(0), None);
        assert_eq!(v.logical_of_user(3), None);
        assert_eq!(ids(&VisibleDevices::parse(Some("6"), 8)), [6]);
        assert_eq!(ids(&VisibleDevices::parse(Some("01,002"), 8)), [1, 2], "leading zeros are digits");
    }

    #[test]
    fn reading_stops_at_the_first_bad_character_or_id() {
        assert_eq!(ids(&VisibleDevices::parse(Some("1, 2,3"), 8)), [1]);
        assert_eq!(ids(&VisibleDevices::parse(Some("1,3,8"), 8)), [1, 3]);
        assert_eq!(ids(&VisibleDevices::parse(Some("1,,2"), 8)), [1]);
        assert_eq!(ids(&VisibleDevices::parse(Some("2,3,"), 8)), [2, 3]);
        assert_eq!(ids(&VisibleDevices::parse(Some("0,1;2"), 8)), [0, 1]);
        assert_eq!(ids(&VisibleDevices::parse(Some("1,99999999999,2"), 8)), [1]);
        assert_eq!(ids(&VisibleDevices::parse(Some("0,1,2,3"), 2)), [0, 1], "at most the machine");
    }

    #[test]
    fn faults_leave_no_device() {
        for (value, fault) in [
            ("3,1", Fault::NotAscending),
            ("1,1", Fault::Duplicated),
            ("2,4,4", Fault::Duplicated),
            ("x", Fault::NoValidId),
            (" 1", Fault::NoValidId),
            ("", Fault::NoValidId),
            ("8", Fault::NoValidId),
        ] {
            let v = VisibleDevices::parse(Some(value), 8);
            assert_eq!(v.fault, Some(fault), "{value:?}");
            assert_eq!(v.count(), 0, "{value:?}");
            assert!(v.fault_text().unwrap().contains("ASCEND_RT_VISIBLE_DEVICES"));
        }
    }
}
