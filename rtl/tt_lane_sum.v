`default_nettype none
// tt_lane_sum: the adder trees of the contraction engine's lane sum (golden/isa/lanes.py). N lanes carry a group's
// sums, lane c + (N / R) r holding output c's part r (R = 2^stages sum lanes, up to N / R outputs). Each stage folds
// the upper half of the words onto the lower half, with a register: after s stages word c holds the sum of the words
// c + (N >> s) r, r < 2^s. The sums of the words taken with in_valid leave `stages` cycles later with out_valid and
// the tag taken with them, words c < N >> stages of out_sums (the rest 0). A new set of words may enter every cycle;
// `stages` must stay the same while sums are in flight (an op's). The sums are exact in WIDTH bits: the compiler
// bounds every reduction, and a lane's partial sum and any sum of them stay within the bound of the whole (SPEC 1.2),
// so no stage needs a wider word (two's complement addition gives the same bits signed or unsigned at one width).
module tt_lane_sum #(
  parameter integer N      = 2,   // words (lanes), 2..256, a multiple of 2^STAGES
  parameter integer STAGES = 1,   // the most stages an op takes (R up to 2^STAGES), >= 1
  parameter integer WIDTH  = 48,  // bits per word, >= 2
  parameter integer TAG_W  = 1    // tag bits carried with the words, >= 1
) (
  input  wire                     clk,
  input  wire                     rst,
  input  wire [3:0]               stages,    // log2 R, 1..STAGES
  input  wire                     in_valid,
  input  wire [TAG_W-1:0]         in_tag,
  input  wire [N*WIDTH-1:0]       in_data,   // word i in [WIDTH*i +: WIDTH]
  output reg                      out_valid,
  output reg                      out_valid_next,  // out_valid of the next cycle (with `stages` unchanged)
  output reg  [TAG_W-1:0]         out_tag,
  output reg  [(N/2)*WIDTH-1:0]   out_sums   // word c in [WIDTH*c +: WIDTH]
);

  // Elaboration-time parameter checks (a missing module stops both Icarus 11 and Verilator).
  generate
    if (N < 2 || N > 256) begin : g_bad_n
      error_tt_lane_sum_N_must_be_2_to_256 u_error ();
    end
    if (STAGES < 1 || STAGES > 8 || N % (1 << STAGES) != 0) begin : g_bad_stages
      error_tt_lane_sum_STAGES_must_be_1_to_8_and_2_pow_STAGES_must_divide_N u_error ();
    end
    if (WIDTH < 2) begin : g_bad_width
      error_tt_lane_sum_WIDTH_must_be_at_least_2 u_error ();
    end
    if (TAG_W < 1) begin : g_bad_tag_w
      error_tt_lane_sum_TAG_W_must_be_at_least_1 u_error ();
    end
  endgenerate

  // Word j of stage s (stage 0: the inputs) is word level_start(s) + j of `tree`: stage s holds N >> s words.
  function automatic integer level_start(input integer s);
    level_start = 2 * N - 2 * (N >> s);
  endfunction
  localparam integer NODES = N - (N >> STAGES);  // the registered words of stages 1..STAGES

  reg  [NODES*WIDTH-1:0]     node_q;  // no reset: out_valid says when a stage holds sums
  wire [(N+NODES)*WIDTH-1:0] tree = {node_q, in_data};
  integer s;
  integer j;
  always @(posedge clk) begin
    for (s = 1; s <= STAGES; s = s + 1) begin
      for (j = 0; j < (N >> s); j = j + 1) begin
        node_q[WIDTH*(level_start(s) - N + j) +: WIDTH] <= tree[WIDTH*(level_start(s-1) + j) +: WIDTH] +
                                                          tree[WIDTH*(level_start(s-1) + j + (N >> s)) +: WIDTH];
      end
    end
  end

  // valid and tag beside the stages; the op's stage count selects where its sums leave
  reg [STAGES*(TAG_W+1)-1:0] pipe_q;
  integer ps;  // each block has loop variables of its own (one shared by two blocks has two drivers)
  always @(posedge clk) begin
    if (rst) begin
      pipe_q <= {(STAGES*(TAG_W+1)){1'b0}};
    end else begin
      pipe_q[0 +: TAG_W+1] <= {in_tag, in_valid};
      for (ps = 1; ps < STAGES; ps = ps + 1) begin
        pipe_q[(TAG_W+1)*ps +: TAG_W+1] <= pipe_q[(TAG_W+1)*(ps-1) +: TAG_W+1];
      end
    end
  end

  // out_valid_next lets a user register copies of out_valid (one per group of a wide register it enables).
  // valid_at[k]: the valid that stage k + 1 takes, in_valid first.
  wire [STAGES-1:0] valid_at;
  genvar vk;
  generate
    for (vk = 0; vk < STAGES; vk = vk + 1) begin : g_valid_at
      if (vk == 0) begin : g_in
        assign valid_at[vk] = in_valid;
      end else begin : g_stage
        assign valid_at[vk] = pipe_q[(TAG_W+1)*(vk-1)];
      end
    end
  endgenerate
  // Every loop variable of a combinational block is assigned on every pass (yosys 0.70 builds a latch for one
  // assigned only under a condition).
  integer os;
  integer c;
  always @* begin
    out_valid      = 1'b0;
    out_valid_next = 1'b0;
    out_tag        = {TAG_W{1'b0}};
    out_sums       = {((N/2)*WIDTH){1'b0}};
    c = 0;
    for (os = 1; os <= STAGES; os = os + 1) begin
      if ({28'd0, stages} == os) begin
        {out_tag, out_valid} = pipe_q[(TAG_W+1)*(os-1) +: TAG_W+1];
        out_valid_next       = !rst && valid_at[os-1];
        for (c = 0; c < (N >> os); c = c + 1) begin
          out_sums[WIDTH*c +: WIDTH] = tree[WIDTH*(level_start(os) + c) +: WIDTH];
        end
      end
    end
  end

endmodule
`default_nettype wire
