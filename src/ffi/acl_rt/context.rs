//! `acl/acl_rt.h`: contexts.

use crate::error::AclError;
use crate::error::acl_codes::aclError;
use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;
use crate::ffi::acl_base::aclrtContext;
use crate::ffi::acl_call;
use crate::ffi::handles::{resolve, to_c};
use crate::ffi::ptr::Out;
use crate::runtime::context::{self, Context};
use crate::runtime::device;

/// Creates a context on `deviceId` and makes it current on this thread.
///
/// # Safety
/// `context` is NULL or valid for a write of an `aclrtContext`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateContext(context: *mut aclrtContext, deviceId: i32) -> aclError {
    acl_call("aclrtCreateContext", || {
        device::check_id(deviceId, crate::config::settings())?;
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(context, "context") }?;
        let ctx = Context::create(deviceId, true)?;
        ctx.announce();
        out.write(to_c(ctx.handle));
        context::set_current(Some(ctx));
        Ok(())
    })
}

/// Destroys a context made by `aclrtCreateContext`, after its streams' pending work. A
/// device's default context is released with `aclrtResetDevice` instead (107000 here).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDestroyContext(context: aclrtContext) -> aclError {
    acl_call("aclrtDestroyContext", || {
        let ctx = resolve::<Context>(context, "context")?;
        if !ctx.explicit {
            return Err(AclError::new(
                ACL_ERROR_RT_PARAM_INVALID,
                "this is a device's default context; release it with aclrtResetDevice",
            ));
        }
        context::clear_current_if(ctx.handle);
        ctx.destroy(false);
        Ok(())
    })
}

/// Makes `context` current on this thread (how a context is carried to another thread).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetCurrentContext(context: aclrtContext) -> aclError {
    acl_call("aclrtSetCurrentContext", || {
        context::set_current(Some(resolve::<Context>(context, "context")?));
        Ok(())
    })
}

/// This thread's current context; 107002 when none.
///
/// # Safety
/// `context` is NULL or valid for a write of an `aclrtContext`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetCurrentContext(context: *mut aclrtContext) -> aclError {
    acl_call("aclrtGetCurrentContext", || {
        let ctx = context::current()?;
        // SAFETY: forwarded from this function's contract.
        unsafe { Out::new(context, "context") }?.write(to_c(ctx.handle));
        Ok(())
    })
}
