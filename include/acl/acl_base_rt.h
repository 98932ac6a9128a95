/* acl/acl_base_rt.h: the vendor's header of the runtime's basic types and functions. Here they
 * are generated into acl/acl_base.h (which the vendor's acl_base.h includes this header for), so
 * a program that includes this one directly gets the same declarations. Written by hand. */

#ifndef INC_EXTERNAL_ACL_ACL_BASE_RT_H_
#define INC_EXTERNAL_ACL_ACL_BASE_RT_H_

#include "acl_base.h"

#endif /* INC_EXTERNAL_ACL_ACL_BASE_RT_H_ */
