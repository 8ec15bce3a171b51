`default_nettype none
// tt_skid: a register slice on a valid/ready stream (a skid buffer), full throughput, with in_ready a flip-flop.
//
// Why: a producer whose step has a wide fan-out (tt_loop_addr: the enables of some 800 index and mark registers)
// must not wait on the consumer's ready logic. Here the producer's ready is !skid_valid_q, and the consumer's ready
// reaches only this slice's two words. Cost: one cycle of latency; a word a cycle when the consumer takes one.
//
// The output word sits in out_q; a word that arrives while the output is held waits in skid_q, and in_ready falls
// the next cycle. A transfer happens on a cycle with valid && ready on either side; words leave in arrival order.
// rst drops both words.
module tt_skid #(
  parameter integer WIDTH = 8  // word width, >= 1
) (
  input  wire             clk,
  input  wire             rst,
  input  wire             in_valid,
  output wire             in_ready,
  input  wire [WIDTH-1:0] in_data,
  output wire             out_valid,
  input  wire             out_ready,
  output wire [WIDTH-1:0] out_data
);

  generate
    if (WIDTH < 1) begin : g_bad_width
      error_tt_skid_WIDTH_must_be_at_least_1 u_error ();
    end
  endgenerate

  reg             out_valid_q;
  reg             skid_valid_q;
  reg [WIDTH-1:0] out_q;
  reg [WIDTH-1:0] skid_q;
  wire            out_free = !out_valid_q || out_ready;  // out_q takes a new word (or empties) this cycle

  always @(posedge clk) begin
    if (rst) begin
      out_valid_q  <= 1'b0;
      skid_valid_q <= 1'b0;
    end else if (out_free) begin
      out_valid_q  <= skid_valid_q || in_valid;
      skid_valid_q <= 1'b0;
    end else if (in_valid && !skid_valid_q) begin
      skid_valid_q <= 1'b1;
    end
  end

  // The datapath needs no reset: a word is read only with its valid.
  always @(posedge clk) begin
    if (out_free) begin
      out_q <= skid_valid_q ? skid_q : in_data;
    end
    if (!skid_valid_q) begin
      skid_q <= in_data;
    end
  end

  assign in_ready  = !skid_valid_q;
  assign out_valid = out_valid_q;
  assign out_data  = out_q;

endmodule
`default_nettype wire
