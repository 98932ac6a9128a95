//! The objects of queue routes: a route (`acltdtQueueRoute`: source, destination, status), a
//! list of routes (`acltdtQueueRouteList`) and a query (`acltdtQueueRouteQueryInfo`). A list
//! holds copies of routes, as the vendor's; binding through a list writes each copy's status.

use std::sync::{Arc, Mutex};

use crate::error::acl_codes::ACL_ERROR_INVALID_PARAM;
use crate::error::{AclError, AclResult};
use crate::handle::Handle;
use crate::handle_kind;
use crate::runtime::tdt::queue::{self, QUERY_ABNORMAL, QUERY_DST, QUERY_SRC, QUERY_SRC_AND_DST};
use crate::sync;

/// A route's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteValue {
    pub src: u32,
    pub dst: u32,
    pub status: i32,
}

pub struct QueueRoute {
    pub value: Mutex<RouteValue>,
}

handle_kind!(pub static ROUTES: TdtQueueRoute => QueueRoute, AclError);

pub struct RouteList {
    routes: Mutex<Vec<RouteValue>>,
}

handle_kind!(pub static ROUTE_LISTS: TdtQueueRouteList => RouteList, AclError);

#[derive(Default)]
struct Query {
    mode: Option<i32>,
    src: Option<u32>,
    dst: Option<u32>,
}

pub struct QueryInfo {
    query: Mutex<Query>,
}

handle_kind!(pub static QUERIES: TdtQueueRouteQuery => QueryInfo, AclError);

fn invalid(message: impl Into<String>) -> AclError {
    AclError::new(ACL_ERROR_INVALID_PARAM, message)
}

/// `acltdtCreateQueueRoute`: a route from `src` to `dst`, status 0 (unbound).
pub fn create_route(src: u32, dst: u32) -> u64 {
    ROUTES.insert(QueueRoute { value: Mutex::new(RouteValue { src, dst, status: queue::ROUTE_UNBIND }) })
}

pub fn route(raw: u64) -> AclResult<Arc<QueueRoute>> {
    QueueRoute::resolve(raw, "route")
}

pub fn destroy_route(raw: u64) -> AclResult<()> {
    QueueRoute::release(raw, "route").map(drop)
}

pub fn create_list() -> u64 {
    ROUTE_LISTS.insert(RouteList { routes: Mutex::new(Vec::new()) })
}

pub fn list(raw: u64, what: &str) -> AclResult<Arc<RouteList>> {
    RouteList::resolve(raw, what)
}

pub fn destroy_list(raw: u64) -> AclResult<()> {
    RouteList::release(raw, "routeList").map(drop)
}

impl RouteList {
    /// `acltdtAddQueueRoute`: appends a copy of the route.
    pub fn add(&self, r: RouteValue) {
        sync::lock(&self.routes).push(r);
    }

    pub fn len(&self) -> usize {
        sync::lock(&self.routes).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `index`-th route's values.
    pub fn get(&self, index: usize) -> AclResult<RouteValue> {
        let routes = sync::lock(&self.routes);
        routes.get(index).copied().ok_or_else(|| {
            invalid(format!("index {index} must be less than the list's size {}", routes.len()))
        })
    }

    /// `acltdtBindQueueRoutes` / `acltdtUnbindQueueRoutes` of the list's routes, writing each
    /// one's status back.
    pub fn bind(&self, bind: bool) -> AclResult<()> {
        let mut routes = sync::lock(&self.routes);
        let mut work: Vec<((u32, u32), i32)> = routes.iter().map(|r| ((r.src, r.dst), r.status)).collect();
        let result = if bind { queue::bind(&mut work) } else { queue::unbind(&mut work) };
        for (r, (_, status)) in routes.iter_mut().zip(work) {
            r.status = status;
        }
        result
    }

    /// `acltdtQueryQueueRoutes`: replaces the list's routes with those the query finds.
    pub fn fill_from(&self, q: &QueryInfo) -> AclResult<()> {
        let mut routes = sync::lock(&self.routes);
        routes.clear();
        let (mode, src, dst) = q.checked()?;
        *routes = queue::query(mode, src, dst)?
            .into_iter()
            .map(|((src, dst), status)| RouteValue { src, dst, status })
            .collect();
        Ok(())
    }
}

pub fn create_query() -> u64 {
    QUERIES.insert(QueryInfo { query: Mutex::new(Query::default()) })
}

pub fn query(raw: u64, what: &str) -> AclResult<Arc<QueryInfo>> {
    QueryInfo::resolve(raw, what)
}

pub fn destroy_query(raw: u64) -> AclResult<()> {
    QueryInfo::release(raw, "info").map(drop)
}

impl QueryInfo {
    pub fn set_mode(&self, mode: i32) {
        sync::lock(&self.query).mode = Some(mode);
    }

    pub fn set_src(&self, src: u32) {
        sync::lock(&self.query).src = Some(src);
    }

    pub fn set_dst(&self, dst: u32) {
        sync::lock(&self.query).dst = Some(dst);
    }

    /// The mode and the ids it needs, as the vendor checks them: the mode must be set, and the
    /// source and/or destination it looks at too (100000 otherwise).
    fn checked(&self) -> AclResult<(i32, u32, u32)> {
        let q = sync::lock(&self.query);
        let mode = q.mode.ok_or_else(|| {
            invalid("the query has no mode: set ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM with acltdtSetQueueRouteQueryInfo")
        })?;
        let need_src = matches!(mode, QUERY_SRC | QUERY_SRC_AND_DST);
        let need_dst = matches!(mode, QUERY_DST | QUERY_SRC_AND_DST);
        if !matches!(mode, QUERY_SRC | QUERY_DST | QUERY_SRC_AND_DST | QUERY_ABNORMAL) {
            return Err(invalid(format!("mode {mode} is not an acltdtQueueRouteQueryMode")));
        }
        if need_src && q.src.is_none() {
            return Err(invalid(
                "the query's mode needs its source queue: set ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32",
            ));
        }
        if need_dst && q.dst.is_none() {
            return Err(invalid(
                "the query's mode needs its destination queue: set ACL_TDT_QUEUE_ROUTE_QUERY_DST_ID_UINT32",
            ));
        }
        Ok((mode, q.src.unwrap_or(0), q.dst.unwrap_or(0)))
    }
}
