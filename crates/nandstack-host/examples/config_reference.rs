//! Print the generated config reference (markdown).
fn main() {
    print!("{}", nandstack_host::config::config_reference_markdown());
}
