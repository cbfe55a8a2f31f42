fn main() {
    print!("{}", nandstack_sim::config_reference_markdown());
}
