# shellcheck shell=bash
# Environment for running the kernel test-suite on Mesa's lavapipe (software
# Vulkan, from bookworm-backports) through wgpu. Sourced by .ci/run; developers
# can use it too:   source .ci/env.sh
# It only exports variables; it installs nothing (.ci/run does that).

# Locate lavapipe's ICD manifest (installed by mesa-vulkan-drivers): Mesa 25
# (bookworm-backports) ships lvp_icd.json, Mesa 22 shipped lvp_icd.<arch>.json.
KERNEL_LVP_ICD=""
for __kernel_f in /usr/share/vulkan/icd.d/lvp_icd.json \
                  "/usr/share/vulkan/icd.d/lvp_icd.$(uname -m).json" \
                  /usr/share/vulkan/icd.d/lvp_icd.*.json; do
    if [ -e "$__kernel_f" ]; then KERNEL_LVP_ICD="$__kernel_f"; break; fi
done
unset __kernel_f

if [ -n "$KERNEL_LVP_ICD" ]; then
    export KERNEL_LVP_ICD
    # Make lavapipe the only Vulkan driver the loader sees
    # (VK_DRIVER_FILES: loader >= 1.3.207; VK_ICD_FILENAMES: older spelling).
    export VK_DRIVER_FILES="$KERNEL_LVP_ICD"
    export VK_ICD_FILENAMES="$KERNEL_LVP_ICD"
else
    echo "env.sh: warning: lavapipe ICD (lvp_icd*.json) not found;" \
         "run .ci/run, or: apt-get install -t bookworm-backports mesa-vulkan-drivers" >&2
fi

# wgpu reads these only where the code builds its Instance/adapter from the
# environment (InstanceDescriptor::new_without_display_handle_from_env(),
# Backends::from_env(), wgpu::util::initialize_adapter_from_env...).
export WGPU_BACKEND=vulkan               # never fall back to GL (llvmpipe via EGL)
export WGPU_ADAPTER_NAME="${WGPU_ADAPTER_NAME:-llvmpipe}"  # lavapipe's device name

export CARGO_TERM_COLOR=never
