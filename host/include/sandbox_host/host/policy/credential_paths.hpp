// Where tools keep credentials below a home directory, by their default paths.
//
// Why a list: a session without hooks (claude --bare, CLAUDE_CODE_SIMPLE=1) is held by
// managed deny rules alone, and those rules name the home's entries as they were when the
// policy was installed. A credential made later (the first `aws configure`, `gh auth login`,
// `docker login`) would be open to such a session until the next install; these paths are
// denied whether or not they exist yet, unless the policy re-allows them.
#pragma once

#include <string_view>

namespace sandbox_host::policy {

// Relative to the home.
inline constexpr std::string_view kCredentialPaths[] = {
    // Keys and agents' sockets: ssh, gpg, the desktop's keyring, pass.
    ".ssh",
    ".gnupg",
    ".local/share/keyrings",
    ".password-store",
    // Cloud and cluster logins.
    ".aws",
    ".azure",
    ".config/gcloud",
    ".oci",
    ".kube",
    ".config/doctl",
    ".terraform.d/credentials.tfrc.json",
    ".vault-token",
    // Container registries.
    ".docker",
    ".config/containers/auth.json",
    // Git hosts and git's own stores.
    ".config/gh",
    ".config/hub",
    ".config/glab-cli",
    ".git-credentials",
    ".config/git/credentials",
    ".netrc",
    ".authinfo",
    ".authinfo.gpg",
    // Package registries' tokens.
    ".npmrc",
    ".yarnrc.yml",
    ".pypirc",
    ".gem/credentials",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".m2/settings-security.xml",
    // Databases' passwords.
    ".pgpass",
    ".my.cnf",
    // Other stores of tokens: rclone's remotes, s3cmd and boto, 1Password's CLI, Claude
    // Code's own login, browsers' cookies and saved passwords.
    ".config/rclone",
    ".s3cfg",
    ".boto",
    ".config/op",
    ".claude/.credentials.json",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
};

}  // namespace sandbox_host::policy
