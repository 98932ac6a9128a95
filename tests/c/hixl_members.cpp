// hixl_members.cpp - part of ascendless.
// Takes the address of every member of hixl::Hixl as declared by include/hixl/hixl.h and
// defines nothing: the object's undefined symbols are the names the library must export.
// tests/c_abi.rs compiles it under both string ABIs and compares them with the vendor's list.
#include <map>
#include <vector>

#include "hixl/hixl.h"

using namespace hixl;

unsigned char sink[64];

template <typename T>
static void keep(T member) {
  static_assert(sizeof(T) <= sizeof(sink), "a member pointer fits");
  __builtin_memcpy(static_cast<void *>(sink), static_cast<const void *>(&member), sizeof(T));
}

void touch_every_member() {
  Hixl *h = new Hixl();
  delete h;
  keep(&Hixl::Initialize);
  keep(&Hixl::Finalize);
  keep(&Hixl::RegisterMem);
  keep(&Hixl::DeregisterMem);
  keep(&Hixl::Connect);
  keep(&Hixl::Disconnect);
  keep(&Hixl::ConnectAsync);
  keep(&Hixl::DisconnectAsync);
  keep(static_cast<Status (Hixl::*)(const AscendString &, AsyncConnectStatus &)>(&Hixl::GetAsyncConnectStatus));
  keep(static_cast<Status (Hixl::*)(std::map<AscendString, AsyncConnectStatus> &)>(&Hixl::GetAsyncConnectStatus));
  keep(&Hixl::TransferSync);
  keep(&Hixl::TransferAsync);
  keep(static_cast<Status (Hixl::*)(const TransferReq &, TransferStatus &)>(&Hixl::GetTransferStatus));
  keep(static_cast<Status (Hixl::*)(const GetTransferStatusArgs &, std::vector<TransferResult> &)>(
      &Hixl::GetTransferStatus));
  keep(&Hixl::SendNotify);
  keep(&Hixl::GetNotifies);
  keep(&Hixl::GetCapability);
}
