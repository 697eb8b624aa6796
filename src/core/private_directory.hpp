// Private directories for the files other processes of this user must find by name (the listeners' Unix
// sockets, the bootstrap's id file). A shared place such as /tmp lets any user create a name first, so the
// directory is made mode 0700 by its owner and used only when it is a directory of this uid that nobody else
// can enter: a directory or link someone else planted there is refused, never followed.
#pragma once

#include <string>

namespace peerlink {

/// $XDG_RUNTIME_DIR when it is set to an absolute path (per user, mode 0700, made by systemd-logind), else
/// "/tmp": where peerlink makes its private directories. An OS convention, not a peerlink setting, so it is not
/// in the parameter registry.
std::string runtimeDirectory();

/// `parent`/`name`, made mode 0700 when missing. Error(SystemError) naming the path and what to do when it
/// cannot be made (no room: ENOSPC, EDQUOT; no permission) or when what is there is not a directory of this uid
/// (geteuid) with no access for group or others.
std::string privateDirectory(const std::string& parent, const std::string& name);

}  // namespace peerlink
